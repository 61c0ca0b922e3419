import { readFileSync } from "node:fs";
import type { ClientSocket } from "./peerVerdict.ts";
import { addressBytes, parseProcNetTcp, sameAddress } from "./procNet.ts";
import { type DiagSocket, diagLookup, diagSocketsBetween } from "./socketDiag.ts";

export interface ClientEnd {
  /** The client's address and port, as the server sees them. */
  address: string;
  port: number;
  /** The port the client connected to. */
  serverPort: number;
  /** The address the server is bound to; a wildcard (0.0.0.0, ::) or a name tells nothing. */
  serverAddress?: string;
}

const TABLES = ["/proc/net/tcp", "/proc/net/tcp6"];

/**
 * The client's own socket of a connection from this host. Bun does not say which of its addresses
 * the client reached: a server bound to one address was reached there, and the client's socket is
 * looked up by its exact four-tuple; a server on a wildcard address could have been reached at any
 * of this host's, so every socket between the client's port and the server's is listed instead
 * (filtered in the kernel). /proc/net/tcp{,6} answers only when sock_diag cannot.
 */
export function findClientSocket(end: ClientEnd): ClientSocket {
  const client = addressBytes(end.address);
  if (!client) return "absent";
  const bound = end.serverAddress === undefined ? undefined : addressBytes(end.serverAddress);
  const server = bound?.some((b) => b !== 0) ? bound : undefined;
  if (server) {
    const found = diagLookup({ local: { address: client, port: end.port }, remote: { address: server, port: end.serverPort } });
    if (found !== undefined) return found === "absent" ? "absent" : { uid: found.uid, inode: found.inode };
  } else {
    const sockets = diagSocketsBetween(end.port, end.serverPort);
    if (sockets) return pickClientSocket(sockets, { client, port: end.port, serverPort: end.serverPort });
  }
  const rows = TABLES.flatMap((table) => parseProcNetTcp(readText(table)));
  return pickClientSocket(rows, { client, port: end.port, serverPort: end.serverPort, server });
}

export interface Wanted {
  client: Uint8Array;
  port: number;
  serverPort: number;
  /** When known, the server address the client reached. */
  server?: Uint8Array;
}

/**
 * Which of the sockets listed is the client's end: its own address and port are the client's, its
 * remote port (and address, when known) the server's. Without the server's address, connections to
 * two of the host's addresses can share the client's address and port: they then tell which is
 * this one only when both are live and of one user; otherwise (a command's socket, or one already
 * closed, beside a person's) the answer is "ambiguous". Pure.
 */
export function pickClientSocket(sockets: readonly DiagSocket[], wanted: Wanted): ClientSocket {
  const matching = sockets.filter(
    (s) =>
      s.local.port === wanted.port &&
      s.remote.port === wanted.serverPort &&
      sameAddress(s.local.address, wanted.client) &&
      (wanted.server === undefined || sameAddress(s.remote.address, wanted.server)),
  );
  const first = matching[0];
  if (!first) return "absent";
  if (matching.some((s) => s.inode === 0 || s.uid !== first.uid) && matching.length > 1) return "ambiguous";
  return { uid: first.uid, inode: first.inode };
}

function readText(path: string): string {
  try {
    return readFileSync(path, "latin1");
  } catch {
    return ""; // no IPv6, or no /proc: nothing found, and the request is the agent's
  }
}
