import { dlopen, type Library } from "bun:ffi";

const LIBC_CANDIDATES = ["libc.so.6", "libc.so", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"];
const SYMBOLS = {
  prctl: { args: ["i32", "u64", "u64", "u64", "u64"], returns: "i32" },
  waitpid: { args: ["i32", "ptr", "i32"], returns: "i32" },
} as const;

export type ProcessLibc = Library<typeof SYMBOLS>["symbols"];

let loaded: ProcessLibc | { problem: string } | undefined;

/**
 * The few libc calls about the process itself (prctl, waitpid), loaded once. The PTY layer has its
 * own, larger binding; this one is small enough for the supervisor, which never loads the PTY layer.
 */
export function processLibc(): ProcessLibc | { problem: string } {
  if (loaded) return loaded;
  let lastError = "no libc found";
  for (const name of LIBC_CANDIDATES) {
    try {
      loaded = dlopen(name, SYMBOLS).symbols;
      return loaded;
    } catch (error) {
      lastError = (error as Error).message;
    }
  }
  loaded = { problem: `cannot load libc: ${lastError}` };
  return loaded;
}

/** prctl(option, value); the problem when it fails or libc cannot be loaded. */
export function setProcessControl(option: number, value: number, what: string): string | undefined {
  const libc = processLibc();
  if ("problem" in libc) return libc.problem;
  return libc.prctl(option, BigInt(value), 0n, 0n, 0n) === 0 ? undefined : `prctl(${what}) failed`;
}
