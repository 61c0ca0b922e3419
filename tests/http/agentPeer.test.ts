import { afterAll, describe, expect, test } from "bun:test";
import { parseProcStat } from "../../src/core/process/index.ts";
import { DECISION_PATHS } from "../../src/http/agentPeerGuard.ts";
import { lookupPeer } from "../../src/http/peerProcess.ts";
import { addressBytes, decodeProcAddress, parseProcNetTcp, sameAddress, socketInode } from "../../src/http/procNet.ts";

// Captured from a Debian 12 host: a listener on 0.0.0.0:2024, a loopback client 127.0.0.1:38641 → :39684, and ::1 on tcp6.
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1165 1 0000000031851e92 100 0 0 10 0
   1: 0100007F:96F1 0100007F:9B04 01 00000000:00000000 03:00000F45 00000000  1001        0 77123 3 0000000043947a7f
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:A1B2 00000000000000000000000001000000:1B9E 01 00000000:00000000 00:00000000 00000000  1001        0 88001 1 0000000000000000 20 4 30 10 -1
`;

describe("/proc parsing", () => {
  test("decodes little-endian IPv4 and IPv6 words and hex ports", () => {
    expect(decodeProcAddress("0100007F:96F1")).toEqual({ address: Uint8Array.from([127, 0, 0, 1]), port: 38641 });
    const v6 = decodeProcAddress("00000000000000000000000001000000:A1B2")!;
    expect(sameAddress(v6.address, addressBytes("::1")!)).toBe(true);
    expect(v6.port).toBe(0xa1b2);
    expect(decodeProcAddress("zz:1")).toBeUndefined();
  });
  test("reads rows: addresses, uid and inode", () => {
    const rows = parseProcNetTcp(TCP);
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatchObject({ uid: 1001, inode: 77123, local: { port: 38641 }, remote: { port: 39684 } });
    expect(parseProcNetTcp(TCP6)[0]).toMatchObject({ uid: 1001, inode: 88001 });
  });
  test("IPv4-mapped addresses equal their IPv4 form", () => {
    expect(sameAddress(addressBytes("::ffff:127.0.0.1")!, addressBytes("127.0.0.1")!)).toBe(true);
    expect(sameAddress(addressBytes("127.0.0.2")!, addressBytes("127.0.0.1")!)).toBe(false);
    expect(addressBytes("not an address")).toBeUndefined();
  });
  test("fd links and stat lines with odd comms", () => {
    expect(socketInode("socket:[77123]")).toBe(77123);
    expect(socketInode("/dev/null")).toBeUndefined();
    expect(parseProcStat("4242 (a) b (c)) S 17 4242 4242 34816 4300 4194560 0")).toEqual({
      pid: 4242,
      comm: "a) b (c)",
      state: "S",
      ppid: 17,
      tpgid: 4300,
    });
  });
});

describe("the peer of a real loopback connection", () => {
  // A client process (a child of this test) holds its end open until told to go.
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req, srv) => {
      const peer = srv.requestIP(req)!;
      const asChild = lookupPeer(peer, { roots: [process.pid] });
      const asStranger = lookupPeer(peer, { roots: [999_999_999] });
      return Response.json({ asChild, asStranger });
    },
  });
  afterAll(() => server.stop(true));

  test("a descendant is the agent; the same process seen from elsewhere is not", async () => {
    const child = Bun.spawn(["curl", "-s", `http://127.0.0.1:${server.port}/`], { stdout: "pipe" });
    const body = JSON.parse(await new Response(child.stdout).text());
    await child.exited;
    expect(body.asChild).toMatchObject({ agent: true, why: "descends from agentd", comm: "curl" });
    expect(body.asStranger.agent).toBe(false);
  });
});

describe("a connection with no local socket behind it", () => {
  const options = { roots: [process.pid], hostAddresses: ["192.0.2.10", "2001:db8::10"] };

  test("from another host (a browser on a non-loopback bind, Docker's gateway) is a person", () => {
    expect(lookupPeer({ address: "203.0.113.7", port: 40_000 }, options)).toMatchObject({ agent: false });
    expect(lookupPeer({ address: "::ffff:203.0.113.7", port: 40_000 }, options)).toMatchObject({ agent: false });
  });

  test("from this host's own addresses, loopback included, it stays the agent: the lookup failed closed", () => {
    for (const address of ["192.0.2.10", "::ffff:192.0.2.10", "2001:db8::10", "127.0.0.1", "127.3.2.1", "::1"]) {
      expect({ address, agent: lookupPeer({ address, port: 40_000 }, options).agent }).toEqual({ address, agent: true });
    }
  });
});

describe("the routes only a person may post to", () => {
  const guarded = (path: string) => DECISION_PATHS.some((pattern) => pattern.test(path));

  test("decisions, incident state, silences and a new session's policy are guarded; reading is not", () => {
    for (const path of [
      "/api/approvals/ap_1",
      "/status/approvals/ap_1/decide",
      "/api/incidents/3/action",
      "/status/incidents/3/action",
      "/api/incidents/3/ack",
      "/api/incidents/3/resolve",
      "/status/incidents/3/ack",
      "/status/incidents/3/resolve",
      "/api/incidents/silences",
      "/api/incidents/silences/4",
      "/api/pty/privileged",
      "/api/sessions",
      "/api/admin/reload",
    ])
      expect({ path, guarded: guarded(path) }).toEqual({ path, guarded: true });
    for (const path of ["/api/incidents", "/api/pty", "/api/sessions/ses_1/messages", "/v1/chat/completions"])
      expect({ path, guarded: guarded(path) }).toEqual({ path, guarded: false });
  });
});
