import type * as Ssh2 from "ssh2";

let loading: Promise<typeof Ssh2> | undefined;

/**
 * ssh2, loaded on the first hop rather than at start: loading it compiles a WebAssembly module
 * (about 19 MB of the worker's memory) that a worker without hops never needs.
 */
export function loadSsh2(): Promise<typeof Ssh2> {
  loading ??= import("ssh2");
  return loading;
}
