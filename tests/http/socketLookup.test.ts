import { afterEach, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { readdirSync, readlinkSync } from "node:fs";
import { holderAmongDescendants } from "../../src/http/agentDescendants.ts";
import { addressBytes } from "../../src/http/procNet.ts";
import { decodeDiagReply, diagLookup, encodeDiagRequest } from "../../src/http/socketDiag.ts";
import { waitFor } from "../support/waitFor.ts";

const loopback = addressBytes("127.0.0.1")!;
const children: Subprocess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

/** A loopback listener that records the client port of each connection it accepts. */
function listen() {
  const clientPorts: number[] = [];
  const server = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        clientPorts.push(socket.remotePort);
      },
      data() {},
    },
  });
  return { server, clientPorts };
}

describe("sock_diag", () => {
  test("the request carries the four-tuple in network order; replies decode, ENOENT is absent", () => {
    const bytes = encodeDiagRequest({
      local: { address: loopback, port: 40000 },
      remote: { address: addressBytes("::ffff:127.0.0.1")!, port: 7070 },
    })!;
    const view = new DataView(bytes.buffer);
    expect([bytes.length, view.getUint16(4, true), bytes[16], bytes[17]]).toEqual([72, 20, 2, 6]);
    expect([view.getUint16(24, false), view.getUint16(26, false)]).toEqual([40000, 7070]);
    expect([...bytes.subarray(28, 32), ...bytes.subarray(44, 48)]).toEqual([127, 0, 0, 1, 127, 0, 0, 1]);
    expect(
      encodeDiagRequest({ local: { address: loopback, port: 1 }, remote: { address: addressBytes("::1")!, port: 2 } }),
    ).toBeUndefined();

    const error = new Uint8Array(36);
    new DataView(error.buffer).setUint16(4, 2, true);
    new DataView(error.buffer).setInt32(16, -2, true);
    expect(decodeDiagReply(error, error.length)).toBe("absent");
    const reply = new Uint8Array(88);
    const rv = new DataView(reply.buffer);
    rv.setUint16(4, 20, true);
    rv.setUint32(80, 1000, true);
    rv.setUint32(84, 4242, true);
    expect(decodeDiagReply(reply, reply.length)).toEqual({ uid: 1000, inode: 4242 });
    expect(decodeDiagReply(reply, 40)).toBeUndefined();
  });

  test("a real connection: the client's socket is found with our uid and the inode our fd names; closed, its inode is 0", async () => {
    const { server, clientPorts } = listen();
    const client = await Bun.connect({ hostname: "127.0.0.1", port: server.port, socket: { data() {} } });
    await waitFor("the accept", () => clientPorts[0]);
    const ends = { local: { address: loopback, port: client.localPort }, remote: { address: loopback, port: server.port } };
    const found = diagLookup(ends);
    const ourInodes = readdirSync("/proc/self/fd").map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return "";
      }
    });
    expect(found).toMatchObject({ uid: process.getuid!() });
    expect(ourInodes).toContain(`socket:[${(found as { inode: number }).inode}]`);
    expect(diagLookup({ ...ends, local: { address: loopback, port: 1 } })).toBe("absent");
    client.end();
    await waitFor("the close", () => ((diagLookup(ends) as { inode?: number })?.inode === 0 ? true : undefined));
    server.stop(true);
  });
});

describe("the holder among a tree's descendants", () => {
  test("a grandchild holding the socket is found; under other roots it is not", async () => {
    const { server, clientPorts } = listen();
    // bash opens the connection itself, then its child (sleep) holds it too.
    const child = Bun.spawn(["bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/${server.port}; sleep 30 & wait`]);
    children.push(child);
    const other = Bun.spawn(["sleep", "30"]);
    children.push(other);
    const port = await waitFor("the accept", () => clientPorts[0]);
    const found = diagLookup({ local: { address: loopback, port }, remote: { address: loopback, port: server.port } });
    if (!found || found === "absent") throw new Error("sock_diag did not find the connection");
    const answer = holderAmongDescendants(found.inode, [process.pid]);
    expect(answer).toMatchObject({ comm: expect.stringMatching(/^(bash|sleep)$/) });
    expect(holderAmongDescendants(found.inode, [other.pid])).toEqual({ none: true, quiet: true });
    server.stop(true);
  });
});
