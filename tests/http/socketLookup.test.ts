import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess, TCPSocketListener } from "bun";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { findClientSocket, pickClientSocket } from "../../src/http/clientSocket.ts";
import { peerVerdict } from "../../src/http/peerVerdict.ts";
import { addressBytes, decodeProcAddress, parseProcNetTcp, sameAddress } from "../../src/http/procNet.ts";
import {
  type DiagSocket,
  decodeDiagReplies,
  diagLookup,
  diagSocketsBetween,
  encodeDiagRequest,
  encodePortsRequest,
} from "../../src/http/socketDiag.ts";
import { waitFor } from "../support/waitFor.ts";
import { asUser, type CommandUser, ensureCommandUser } from "./commandUser.ts";

const v4 = addressBytes("127.0.0.1")!;
const v6 = addressBytes("::1")!;

/** One inet_diag_msg as the kernel sends it: nlmsghdr + the message (+ an attribute, which is skipped). */
function diagMessage(socket: { uid: number; inode: number; localPort: number; remotePort: number }, flags = 0x2): Uint8Array {
  const bytes = new Uint8Array(96);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, 93, true); // not a multiple of 4: the next message starts at the aligned offset
  view.setUint16(4, 20, true);
  view.setUint16(6, flags, true);
  bytes[16] = 2;
  view.setUint16(20, socket.localPort, false);
  view.setUint16(22, socket.remotePort, false);
  bytes.set([127, 0, 0, 1], 24);
  bytes.set([127, 0, 0, 2], 40);
  view.setUint32(80, socket.uid, true);
  view.setUint32(84, socket.inode, true);
  return bytes;
}

function control(type: number, errno = 0): Uint8Array {
  const bytes = new Uint8Array(20);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, 20, true);
  view.setUint16(4, type, true);
  view.setInt32(16, -errno, true);
  return bytes;
}

describe("sock_diag messages", () => {
  test("an exact request carries the four-tuple in network order; a ports request asks for a dump", () => {
    const bytes = encodeDiagRequest({
      local: { address: v4, port: 40000 },
      remote: { address: addressBytes("::ffff:127.0.0.1")!, port: 7070 },
    })!;
    const view = new DataView(bytes.buffer);
    expect([bytes.length, view.getUint16(4, true), view.getUint16(6, true), bytes[16], bytes[17]]).toEqual([72, 20, 1, 2, 6]);
    expect([view.getUint16(24, false), view.getUint16(26, false)]).toEqual([40000, 7070]);
    expect([...bytes.subarray(28, 32), ...bytes.subarray(44, 48)]).toEqual([127, 0, 0, 1, 127, 0, 0, 1]);
    expect(encodeDiagRequest({ local: { address: v4, port: 1 }, remote: { address: v6, port: 2 } })).toBeUndefined();

    const dump = encodePortsRequest("ipv6", 40000, 7070);
    const dv = new DataView(dump.buffer);
    expect([dv.getUint16(6, true), dump[16], dv.getUint16(24, false), dv.getUint16(26, false)]).toEqual([0x301, 10, 40000, 7070]);
    expect(dump.subarray(28, 60).every((b) => b === 0)).toBe(true);
  });

  test("replies: the uid and inode at their offsets in inet_diag_msg, a dump until NLMSG_DONE, ENOENT as absent", () => {
    const one = diagMessage({ uid: 1000, inode: 4242, localPort: 40000, remotePort: 7070 }, 0);
    expect(decodeDiagReplies(one, one.length)).toEqual({
      sockets: [
        {
          local: { address: Uint8Array.from([127, 0, 0, 1]), port: 40000 },
          remote: { address: Uint8Array.from([127, 0, 0, 2]), port: 7070 },
          uid: 1000,
          inode: 4242,
        },
      ],
      done: true,
    });
    const batch = new Uint8Array([
      ...diagMessage({ uid: 1, inode: 11, localPort: 1, remotePort: 2 }),
      ...diagMessage({ uid: 2, inode: 22, localPort: 1, remotePort: 2 }),
    ]);
    const first = decodeDiagReplies(batch, batch.length) as { sockets: DiagSocket[]; done: boolean };
    expect({ uids: first.sockets.map((s) => s.uid), done: first.done }).toEqual({ uids: [1, 2], done: false });
    const last = new Uint8Array([...diagMessage({ uid: 3, inode: 33, localPort: 1, remotePort: 2 }), ...control(3)]);
    expect((decodeDiagReplies(last, last.length) as { done: boolean }).done).toBe(true);
    expect(decodeDiagReplies(control(2, 2), 20)).toBe("absent");
    expect(decodeDiagReplies(control(2, 13), 20)).toBeUndefined();
    expect(decodeDiagReplies(one, 40)).toBeUndefined();
  });
});

describe("/proc/net/tcp parsing", () => {
  // Captured from a Debian 12 host: a listener on 0.0.0.0:2024, a loopback client 127.0.0.1:38641 → :39684, and ::1 on tcp6.
  const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1165 1 0000000031851e92 100 0 0 10 0
   1: 0100007F:96F1 0100007F:9B04 01 00000000:00000000 03:00000F45 00000000  1001        0 77123 3 0000000043947a7f
`;
  const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:A1B2 00000000000000000000000001000000:1B9E 01 00000000:00000000 00:00000000 00000000  1001        0 88001 1 0000000000000000 20 4 30 10 -1
`;

  test("decodes little-endian IPv4 and IPv6 words and hex ports", () => {
    expect(decodeProcAddress("0100007F:96F1")).toEqual({ address: Uint8Array.from([127, 0, 0, 1]), port: 38641 });
    const address = decodeProcAddress("00000000000000000000000001000000:A1B2")!;
    expect(sameAddress(address.address, v6)).toBe(true);
    expect(address.port).toBe(0xa1b2);
    expect(decodeProcAddress("zz:1")).toBeUndefined();
  });

  test("reads rows: addresses, uid and inode", () => {
    const rows = parseProcNetTcp(TCP);
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatchObject({ uid: 1001, inode: 77123, local: { port: 38641 }, remote: { port: 39684 } });
    expect(parseProcNetTcp(TCP6)[0]).toMatchObject({ uid: 1001, inode: 88001 });
  });

  test("IPv4-mapped addresses equal their IPv4 form", () => {
    expect(sameAddress(addressBytes("::ffff:127.0.0.1")!, v4)).toBe(true);
    expect(sameAddress(addressBytes("127.0.0.2")!, v4)).toBe(false);
    expect(addressBytes("not an address")).toBeUndefined();
  });
});

describe("which listed socket is the client's end", () => {
  const row = (uid: number, inode: number, server = "127.0.0.1", port = 40000): DiagSocket => ({
    local: { address: v4, port },
    remote: { address: addressBytes(server)!, port: 8080 },
    uid,
    inode,
  });
  const wanted = { client: addressBytes("::ffff:127.0.0.1")!, port: 40000, serverPort: 8080 };

  test("one match is it; none is absent; the server's address, when known, narrows the match", () => {
    expect(pickClientSocket([row(1001, 7), row(0, 9, "127.0.0.1", 40001)], wanted)).toEqual({ uid: 1001, inode: 7 });
    expect(pickClientSocket([row(0, 9, "127.0.0.1", 40001)], wanted)).toBe("absent");
    const twoServers = [row(1001, 7, "127.0.0.5"), row(0, 8, "127.0.0.1")];
    expect(pickClientSocket(twoServers, { ...wanted, server: v4 })).toEqual({ uid: 0, inode: 8 });
  });

  test("without the server's address, sockets that disagree (users, or a closed one) are ambiguous", () => {
    expect(pickClientSocket([row(1001, 7, "127.0.0.5"), row(0, 8)], wanted)).toBe("ambiguous");
    expect(pickClientSocket([row(0, 0, "127.0.0.5"), row(0, 8)], wanted)).toBe("ambiguous");
    expect(pickClientSocket([row(0, 7, "127.0.0.5"), row(0, 8)], wanted)).toEqual({ uid: 0, inode: 7 });
    expect(pickClientSocket([row(0, 0)], wanted)).toEqual({ uid: 0, inode: 0 });
  });
});

describe("real connections", () => {
  let user: CommandUser;
  const children: Subprocess[] = [];
  const listeners: TCPSocketListener[] = [];

  beforeAll(() => {
    user = ensureCommandUser();
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill("SIGKILL");
  });
  afterAll(() => {
    for (const listener of listeners.splice(0)) listener.stop(true);
  });

  /** A listener that records each client port it accepts, and closes its end when the client closes its own. */
  function listen(hostname: string) {
    const clientPorts: number[] = [];
    const server = Bun.listen({
      hostname,
      port: 0,
      socket: {
        open(socket) {
          clientPorts.push(socket.remotePort);
        },
        data() {},
        end(socket) {
          socket.end();
        },
      },
    });
    listeners.push(server);
    return { server, clientPorts };
  }

  /** A connection the command user's bash opens and holds until killed. */
  async function commandUserConnection(hostname: string) {
    const { server, clientPorts } = listen(hostname);
    const child = Bun.spawn(asUser(user, ["bash", "-c", `exec 3<>/dev/tcp/${hostname}/${server.port}; exec sleep 60`]));
    children.push(child);
    const port = await waitFor("the accept", () => clientPorts[0]);
    return { server, port, child };
  }

  test("our own connection: found with our uid and the inode our fd names; gone, absent; closed, its inode is 0", async () => {
    const { server, clientPorts } = listen("127.0.0.1");
    const client = await Bun.connect({ hostname: "127.0.0.1", port: server.port, socket: { data() {} } });
    await waitFor("the accept", () => clientPorts[0]);
    const ends = { local: { address: v4, port: client.localPort }, remote: { address: v4, port: server.port } };
    const found = diagLookup(ends) as DiagSocket;
    const ourLinks = readdirSync("/proc/self/fd").map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return "";
      }
    });
    expect(found.uid).toBe(process.getuid!());
    expect(ourLinks).toContain(`socket:[${found.inode}]`);
    expect(diagLookup({ ...ends, local: { address: v4, port: 1 } })).toBe("absent");
    client.end();
    await waitFor("the close", () => ((diagLookup(ends) as DiagSocket | undefined)?.inode === 0 ? true : undefined));
  });

  for (const hostname of ["127.0.0.1", "::1"]) {
    test(`${hostname}: the command user's socket has its uid, by exact lookup, by ports, and in /proc/net`, async () => {
      const { server, port } = await commandUserConnection(hostname);
      const address = addressBytes(hostname)!;
      const exact = diagLookup({ local: { address, port }, remote: { address, port: server.port } });
      expect(exact).toMatchObject({ uid: user.uid });
      expect(diagSocketsBetween(port, server.port)).toEqual([exact as DiagSocket]);
      const rows = ["/proc/net/tcp", "/proc/net/tcp6"].flatMap((table) => parseProcNetTcp(readFileSync(table, "latin1")));
      expect(pickClientSocket(rows, { client: address, port, serverPort: server.port })).toEqual({
        uid: user.uid,
        inode: (exact as DiagSocket).inode,
      });
      for (const serverAddress of [hostname, undefined]) {
        const socket = findClientSocket({ address: hostname, port, serverPort: server.port, serverAddress });
        expect({ serverAddress, socket }).toEqual({ serverAddress, socket: { uid: user.uid, inode: (exact as DiagSocket).inode } });
      }
    });
  }

  test("a client that reached another loopback address is found when the server's address is not known", async () => {
    const { server, port } = await commandUserConnection("127.0.0.5");
    // The kernel picks 127.0.0.1 as the source for 127.0.0.5: the client's address is not the server's.
    const socket = findClientSocket({ address: "127.0.0.1", port, serverPort: server.port });
    expect(socket).toMatchObject({ uid: user.uid });
    expect(findClientSocket({ address: "127.0.0.1", port, serverPort: server.port, serverAddress: "127.0.0.5" })).toEqual(socket);
    expect(findClientSocket({ address: "127.0.0.1", port, serverPort: server.port, serverAddress: "127.0.0.1" })).toBe("absent");
  });

  test("the command user's socket in TIME_WAIT reports uid 0: a closed socket is the agent, never root", async () => {
    const { server, port, child } = await commandUserConnection("127.0.0.1");
    const end = { address: "127.0.0.1", port, serverPort: server.port, serverAddress: "127.0.0.1" };
    expect(findClientSocket(end)).toMatchObject({ uid: user.uid });
    child.kill("SIGKILL"); // the client closes first, the listener then: the client's end waits in TIME_WAIT
    const closed = await waitFor("TIME_WAIT", () => {
      const socket = findClientSocket(end);
      return typeof socket === "object" && socket.uid === 0 ? socket : undefined;
    });
    expect(closed).toEqual({ uid: 0, inode: 0 });
    expect(peerVerdict({ kind: "connection", address: "127.0.0.1", thisHost: true, socket: closed }, user.uid)).toMatchObject({
      agent: true,
    });
  });
});
