import type { Context } from "hono";
import { getBunServer, getConnInfo } from "hono/bun";
import { findClientSocket } from "./clientSocket.ts";
import { isThisHost } from "./hostAddress.ts";
import type { PeerFacts } from "./peerVerdict.ts";

/**
 * What the kernel says of a request's client: served in-process, or a connection with (when
 * `lookUp`) its client socket's owner. The socket is looked for whatever the client's address: an
 * address this host answers to without listing it on an interface (a local route) must not pass
 * for another host's when the socket is right here.
 */
export function peerFacts(c: Context, lookUp: boolean): PeerFacts {
  let remote: { address?: string; port?: number };
  try {
    remote = getConnInfo(c).remote;
  } catch {
    return { kind: "in_process" }; // no Bun server in the env: app.fetch called directly
  }
  const { address, port } = remote;
  // No address (no TCP peer, or the connection already gone): nothing tells it from the agent.
  if (!address || !port) return { kind: "in_process" };
  if (!lookUp) return { kind: "connection", address };
  // The Bun server fetch was given: the port the client connected to, and the address it is bound to.
  const server = getBunServer<{ port?: unknown; hostname?: unknown }>(c);
  const thisHost = isThisHost(address);
  if (typeof server?.port !== "number") return { kind: "connection", address, thisHost, socket: "absent" };
  const serverAddress = typeof server.hostname === "string" ? server.hostname : undefined;
  return { kind: "connection", address, thisHost, socket: findClientSocket({ address, port, serverPort: server.port, serverAddress }) };
}
