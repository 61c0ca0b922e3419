import type { Client, utils } from "ssh2";

/** What a hop uses of ssh2. */
export interface Ssh2 {
  Client: typeof Client;
  parseKey: typeof utils.parseKey;
}

let loading: Promise<Ssh2> | undefined;

/**
 * ssh2's client and key parser, loaded on the first hop rather than at start: their code and the
 * native crypto they touch on import (about 14 MB of RSS in a compiled probe) are memory a worker
 * without hops never needs. Not through ssh2's index, which also loads its server, key generator
 * and HTTP agents (with node:https and node:tls): about 0.7 MB less heap in the same probe.
 */
export function loadSsh2(): Promise<Ssh2> {
  loading ??= Promise.all([import("ssh2/lib/client.js"), import("ssh2/lib/protocol/keyParser.js")]).then(([client, keys]) => ({
    Client: client.default,
    parseKey: keys.parseKey,
  }));
  return loading;
}
