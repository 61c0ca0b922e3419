import { afterEach, describe, expect, test } from "bun:test";
import type { Server, Socket } from "bun";
import { ClientConnections } from "../../src/http/clientConnections.ts";
import { addressBytes } from "../../src/http/procNet.ts";
import { type DiagSocket, diagEstablishedOn } from "../../src/http/socketDiag.ts";
import { waitFor } from "../support/waitFor.ts";

// The per-client connection cap counts what the kernel lists; sock_diag and /proc/net/tcp must agree.
const servers: Server<undefined>[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.end();
  for (const server of servers.splice(0)) await server.stop(true);
});

async function connections(hostname: string, count: number): Promise<number> {
  const server = Bun.serve({ hostname, port: 0, fetch: () => new Response("ok") });
  servers.push(server);
  for (let i = 0; i < count; i++) sockets.push(await Bun.connect({ hostname, port: server.port!, socket: { data() {} } }));
  return server.port!;
}

const NO_DIAG = () => undefined;

describe("ClientConnections", () => {
  for (const hostname of ["127.0.0.1", "::1"]) {
    test(`${hostname}: sock_diag and /proc/net/tcp count the same open connections`, async () => {
      const port = await connections(hostname, 3);
      const viaDiag = new ClientConnections(port);
      const viaProc = new ClientConnections(port, undefined, NO_DIAG);
      const expanded = hostname === "::1" ? "0:0:0:0:0:0:0:1" : hostname;
      await waitFor("three accepted connections", () => (new ClientConnections(port).count(hostname) === 3 ? true : undefined));
      // The kernel filters by port: the server's three ends, not the clients' (whose own port is another).
      expect(diagEstablishedOn(port)?.map((socket) => socket.local.port)).toEqual([port, port, port]);
      expect(viaDiag.count(hostname)).toBe(3);
      expect(viaProc.count(hostname)).toBe(3);
      expect(viaDiag.count(expanded)).toBe(3);
      expect(viaDiag.count("10.0.0.1")).toBe(0);
    });
  }

  test("addresses from the kernel's list get one spelling: an IPv4 client of an IPv6 socket counts as IPv4", () => {
    const socket = (address: string): DiagSocket => ({
      local: { address: addressBytes("::")!, port: 7070 },
      remote: { address: addressBytes(address)!, port: 40000 },
      uid: 0,
      inode: 1,
    });
    const connections = new ClientConnections(7070, [], () => [socket("::ffff:10.1.2.3"), socket("10.1.2.3"), socket("fe80::1")]);
    expect(connections.count("10.1.2.3")).toBe(2);
    expect(connections.count("::ffff:10.1.2.3")).toBe(2);
    expect(connections.count("fe80:0:0:0:0:0:0:1")).toBe(1);
    expect(connections.count("FE80::1")).toBe(1);
    // What the connection cap checks before it asks a request's peer address.
    expect(connections.busiest()).toBe(2);
    expect(new ClientConnections(7070, [], () => []).busiest()).toBe(0);
  });
});
