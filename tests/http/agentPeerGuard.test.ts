import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { Hono } from "hono";
import { setLogSink } from "../../src/core/log/index.ts";
import { AGENT_DIRECT_CALL_PATHS, type AgentPeerGuardOptions, DECISION_PATHS } from "../../src/http/agentPeerGuard.ts";
import { createApp } from "../../src/http/app.ts";
import { isThisHost } from "../../src/http/hostAddress.ts";
import { type ClientSocket, type PeerFacts, peerVerdict } from "../../src/http/peerVerdict.ts";
import { appDeps } from "./appHarness.ts";
import { type CommandUser, curlPost, ensureCommandUser } from "./commandUser.ts";

const TOKEN = "decision-token-for-the-guard-tests";
const COMMAND_UID = 4242;

describe("the verdict", () => {
  const connection = (socket: ClientSocket, thisHost = true): PeerFacts => ({
    kind: "connection",
    address: thisHost ? "127.0.0.1" : "203.0.113.7",
    thisHost,
    socket,
  });
  const agent = (facts: PeerFacts) => peerVerdict(facts, COMMAND_UID).agent;
  const agentWithoutCommandUser = (facts: PeerFacts) => peerVerdict(facts, undefined).agent;

  test("the command user's socket is the agent; another user's, root's included, is a person", () => {
    expect(agent(connection({ uid: COMMAND_UID, inode: 7 }))).toBe(true);
    expect(peerVerdict(connection({ uid: COMMAND_UID, inode: 7 }), COMMAND_UID).why).toContain(`uid ${COMMAND_UID}`);
    expect(agent(connection({ uid: 0, inode: 7 }))).toBe(false);
    expect(agent(connection({ uid: 1000, inode: 7 }))).toBe(false);
  });

  test("what cannot be told on this host fails closed: in-process, no socket, a closed one, ambiguity", () => {
    expect(agent({ kind: "in_process" })).toBe(true);
    expect(agentWithoutCommandUser({ kind: "in_process" })).toBe(true);
    expect(agent(connection("absent"))).toBe(true);
    expect(agent({ kind: "connection", address: "127.0.0.1" })).toBe(true);
    expect(agent(connection({ uid: 0, inode: 0 }))).toBe(true);
    expect(agent(connection({ uid: 1000, inode: 0 }))).toBe(true);
    expect(agent(connection("ambiguous"))).toBe(true);
  });

  test("no socket from another host's address is a person; a socket found here decides whatever the address", () => {
    expect(agent(connection("absent", false))).toBe(false);
    expect(agent(connection({ uid: COMMAND_UID, inode: 7 }, false))).toBe(true);
  });

  test("without a command user only in-process requests are known to be the agent", () => {
    expect(agentWithoutCommandUser(connection({ uid: COMMAND_UID, inode: 7 }))).toBe(false);
    expect(agentWithoutCommandUser(connection("absent"))).toBe(false);
  });
});

describe("this host's addresses", () => {
  const host = ["192.0.2.10", "2001:db8::10"];
  test("loopback, every interface's address (IPv4-mapped too), and what cannot be parsed", () => {
    for (const address of ["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1", "192.0.2.10", "::ffff:192.0.2.10", "2001:db8::10", "bogus"])
      expect({ address, here: isThisHost(address, host) }).toEqual({ address, here: true });
    for (const address of ["203.0.113.7", "::ffff:203.0.113.7", "2001:db8::11"])
      expect({ address, here: isThisHost(address, host) }).toEqual({ address, here: false });
  });
});

describe("the guarded routes", () => {
  const decision = (path: string) => DECISION_PATHS.some((pattern) => pattern.test(path));
  const direct = (path: string) => AGENT_DIRECT_CALL_PATHS.some((pattern) => pattern.test(path));

  test("decisions, incident state, silences and a new session's policy are decisions; reading is not", () => {
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
      expect({ path, decision: decision(path) }).toEqual({ path, decision: true });
    for (const path of ["/api/incidents", "/api/pty", "/api/sessions/ses_1/messages", "/v1/chat/completions"])
      expect({ path, decision: decision(path) }).toEqual({ path, decision: false });
  });

  test("terminals, files, hops, sessions' messages, MCP and the proxy's admin are direct calls; the proxy and the page are not", () => {
    for (const path of [
      "/api/pty",
      "/api/pty/p1/input",
      "/api/files/write",
      "/api/hops",
      "/api/sessions/ses_1/messages",
      "/mcp",
      "/api/admin/proxy/providers/p/breaker/open",
    ])
      expect({ path, direct: direct(path) }).toEqual({ path, direct: true });
    for (const path of ["/v1/chat/completions", "/status"]) expect({ path, direct: direct(path) }).toEqual({ path, direct: false });
  });
});

/** Routes standing in for the worker's: a decision, a direct call and a route neither guards. */
function routes(): Hono {
  const app = new Hono();
  app.post("/api/approvals/:id", (c) => c.json({ decided: c.req.param("id") }));
  app.post("/api/pty", (c) => c.json({ opened: true }));
  app.get("/api/pty", (c) => c.json({ terminals: [] }));
  app.post("/api/echo", (c) => c.json({ echoed: true }));
  return app;
}

interface Running {
  url: string;
  app: Hono;
  server: Server<undefined>;
}

/**
 * The app with the guard, served on `hostname`. `wildcard` hands fetch a server that does not say
 * its address, as one bound to 0.0.0.0 or :: would: the client's socket is then found by its ports.
 */
function serve(hostname: string, guard: Omit<AgentPeerGuardOptions, "logger" | "paths" | "directCallPaths">, wildcard = false): Running {
  const { app } = createApp(
    appDeps({
      mounts: [{ path: "/", app: routes() }],
      agentPeers: { paths: DECISION_PATHS, directCallPaths: AGENT_DIRECT_CALL_PATHS, ...guard },
    }),
  );
  const server = Bun.serve({
    hostname,
    port: 0,
    fetch: wildcard ? (request, bun) => app.fetch(request, { requestIP: (r: Request) => bun.requestIP(r), port: bun.port }) : app.fetch,
  });
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return { url: `http://${host}:${server.port}`, app, server };
}

const code = (body: string) => (JSON.parse(body) as { error?: { code: string } }).error?.code;

describe.each([
  ["127.0.0.1", false],
  ["::1", false],
  ["127.0.0.1", true],
  ["::1", true],
])("a real server on %s (address unknown to the guard: %p)", (hostname, wildcard) => {
  let user: CommandUser;
  let running: Running;
  const logged: Array<Record<string, unknown>> = [];

  beforeAll(() => {
    user = ensureCommandUser();
    setLogSink((line) => logged.push(JSON.parse(line)));
    running = serve(hostname, { commandUid: user.uid, decisionToken: TOKEN }, wildcard);
  });
  afterAll(async () => {
    await running?.server.stop(true);
    setLogSink((line) => process.stdout.write(`${line}\n`));
  });

  test("the command user is refused a decision (with the token too) and a direct call; other routes answer it", async () => {
    const bare = await curlPost(`${running.url}/api/approvals/ap_1`, { user });
    expect({ status: bare.status, code: code(bare.body) }).toEqual({ status: 403, code: "approver_is_agent" });
    const withToken = await curlPost(`${running.url}/api/approvals/ap_1`, { user, headers: { authorization: `Bearer ${TOKEN}` } });
    expect({ status: withToken.status, code: code(withToken.body) }).toEqual({ status: 403, code: "approver_is_agent" });
    const direct = await curlPost(`${running.url}/api/pty`, { user });
    expect({ status: direct.status, code: code(direct.body) }).toEqual({ status: 403, code: "agent_direct_call" });
    expect((await curlPost(`${running.url}/api/echo`, { user })).status).toBe(200);
    const refused = logged.filter((r) => r.event === "security.approver_is_agent" || r.event === "security.agent_direct_call");
    expect(refused.at(-1)).toMatchObject({ level: "warn", path: "/api/pty", uid: user.uid });
  });

  test("this test's own uid passes a direct call without the token, and a decision only with it", async () => {
    expect((await fetch(`${running.url}/api/pty`, { method: "POST" })).status).toBe(200);
    const bare = await fetch(`${running.url}/api/approvals/ap_1`, { method: "POST" });
    expect(bare.status).toBe(401);
    expect(bare.headers.get("www-authenticate")).toContain("Bearer");
    const error = ((await bare.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("decision_needs_token");
    expect(error.message).toContain("<data_dir>/token");
    expect(error.message).toContain("agentd approve");
    const wrong = await fetch(`${running.url}/api/approvals/ap_1`, { method: "POST", headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    const bearer = await fetch(`${running.url}/api/approvals/ap_1`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } });
    expect({ status: bearer.status, body: await bearer.json() }).toEqual({ status: 200, body: { decided: "ap_1" } });
    const cookie = await fetch(`${running.url}/api/approvals/ap_2`, { method: "POST", headers: { cookie: `agentd_token=${TOKEN}` } });
    expect(cookie.status).toBe(200);
  });

  test("another process of this test's uid (curl, as root) passes with the token", async () => {
    const answer = await curlPost(`${running.url}/api/approvals/ap_3`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect({ status: answer.status, body: JSON.parse(answer.body) }).toEqual({ status: 200, body: { decided: "ap_3" } });
  });

  test("a request served in-process is the agent, token or not; reading stays open to it", async () => {
    const post = (path: string) =>
      new Request(`http://localhost${path}`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } });
    const decision = await running.app.fetch(post("/api/approvals/ap_1"));
    expect({ status: decision.status, code: code(await decision.text()) }).toEqual({ status: 403, code: "approver_is_agent" });
    const direct = await running.app.fetch(post("/api/pty"));
    expect({ status: direct.status, code: code(await direct.text()) }).toEqual({ status: 403, code: "agent_direct_call" });
    expect((await running.app.fetch(new Request("http://localhost/api/pty"))).status).toBe(200);
  });
});

describe("a client that reached another of this host's addresses", () => {
  let user: CommandUser;
  const servers: Running[] = [];
  beforeAll(() => {
    user = ensureCommandUser();
    setLogSink(() => {});
  });
  afterAll(async () => {
    for (const running of servers.splice(0)) await running.server.stop(true);
    setLogSink((line) => process.stdout.write(`${line}\n`));
  });

  test("127.0.0.5, reached from 127.0.0.1: the command user is still refused, the address known or not", async () => {
    for (const wildcard of [false, true]) {
      const running = serve("127.0.0.5", { commandUid: user.uid, decisionToken: TOKEN }, wildcard);
      servers.push(running);
      const answer = await curlPost(`${running.url}/api/pty`, { user });
      expect({ wildcard, status: answer.status, code: code(answer.body) }).toEqual({ wildcard, status: 403, code: "agent_direct_call" });
      // The host guard knows 127.0.0.5 by no loopback name: the request names 127.0.0.1.
      expect((await fetch(`${running.url}/api/pty`, { method: "POST", headers: { host: "127.0.0.1" } })).status).toBe(200);
    }
  });
});

describe("without a command user", () => {
  let user: CommandUser;
  let running: Running;
  beforeAll(() => {
    user = ensureCommandUser();
    setLogSink(() => {});
    running = serve("127.0.0.1", { commandUid: undefined, decisionToken: TOKEN });
  });
  afterAll(async () => {
    await running?.server.stop(true);
    setLogSink((line) => process.stdout.write(`${line}\n`));
  });

  test("connections are not told apart by uid, decisions still need the token, in-process is still the agent", async () => {
    expect((await curlPost(`${running.url}/api/pty`, { user })).status).toBe(200);
    expect((await curlPost(`${running.url}/api/approvals/ap_1`, { user })).status).toBe(401);
    expect((await curlPost(`${running.url}/api/approvals/ap_1`, { user, headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect((await running.app.fetch(new Request("http://localhost/api/pty", { method: "POST" }))).status).toBe(403);
  });

  test("an empty decision token matches no request", async () => {
    const empty = serve("127.0.0.1", { commandUid: user.uid, decisionToken: "" });
    try {
      expect((await fetch(`${empty.url}/api/approvals/ap_1`, { method: "POST" })).status).toBe(401);
      expect((await fetch(`${empty.url}/api/approvals/ap_1`, { method: "POST", headers: { authorization: "Bearer " } })).status).toBe(401);
    } finally {
      await empty.server.stop(true);
    }
  });

  test("no decision token: decisions are open to a person on loopback", async () => {
    const open = serve("127.0.0.1", { commandUid: user.uid, decisionToken: undefined });
    try {
      expect((await fetch(`${open.url}/api/approvals/ap_1`, { method: "POST" })).status).toBe(200);
      expect((await curlPost(`${open.url}/api/approvals/ap_1`, { user })).status).toBe(403);
    } finally {
      await open.server.stop(true);
    }
  });
});
