import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, linkSync, lstatSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { runAgentd, spawnAgentd, stopChild } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { type DaemonProcess, startDaemon } from "./support/daemonProcess.ts";
import { startScriptedUpstream } from "../support/scriptedUpstream.ts";

/** The smaller doors of issue 13, each against the compiled binary: tokens, binds, connections, PTY cap, files, output. */

let daemon: DaemonProcess | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});
afterAll(removeTempDirs);

const NOBODY = 65534;
const NOGROUP = 65534;

async function request(url: string, path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url + path, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  return { status: response.status, body: text.startsWith("{") ? JSON.parse(text) : text };
}

describe("trust only the token agentd made", () => {
  const planted = "planted-token-0123456789abcdefXYZ";
  const cases: Array<[string, (dir: string) => void, RegExp]> = [
    ["a token readable by others (0644)", (dir) => writeFileSync(join(dir, "token"), planted, { mode: 0o644 }), /mode 644, want 600/],
    [
      "a token owned by another user",
      (dir) => {
        writeFileSync(join(dir, "token"), planted, { mode: 0o600 });
        chownSync(join(dir, "token"), NOBODY, NOGROUP);
      },
      /belongs to uid 65534/,
    ],
    ["a world-writable data dir", (dir) => chmodSync(dir, 0o777), /writable by other users \(mode 777\)/],
  ];
  for (const [name, plant, reason] of cases) {
    test(`${name} is refused: --require-token exits 2 and says why`, async () => {
      const dir = makeTempDir("agentd-planted-");
      plant(dir);
      const result = await runAgentd(["serve", "--port", "0", "--require-token", "--data-dir", dir], { timeoutMs: 30_000 });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(reason);
      expect(result.stderr).toContain("Refusing the API token");
    }, 40_000);
  }
});

describe("binds", () => {
  test("127.0.0.2 is not loopback: every route but /livez needs the token", async () => {
    const dataDir = makeTempDir("agentd-bind-");
    const proc = await spawnAgentd(["serve", "--port", "0", "--bind", "127.0.0.2", "--data-dir", dataDir]);
    try {
      const ready = await waitFor("ready.json", () => {
        try {
          return JSON.parse(readFileSync(join(dataDir, "ready.json"), "utf8")) as { url: string };
        } catch {
          return undefined;
        }
      });
      expect((await request(ready.url, "/livez")).status).toBe(200);
      expect((await request(ready.url, "/health")).status).toBe(401);
      const token = readFileSync(join(dataDir, "token"), "utf8").trim();
      expect((await request(ready.url, "/health", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    } finally {
      await stopChild(proc);
    }
  }, 60_000);
});

/** Opens `count` TCP connections that send nothing; resolves once all are connected. */
async function openIdle(port: number, count: number, sockets: Socket[], closed: { count: number }): Promise<void> {
  for (let start = 0; start < count; start += 250) {
    await Promise.all(
      Array.from(
        { length: Math.min(250, count - start) },
        () =>
          new Promise<void>((resolve, reject) => {
            const socket = connect(port, "127.0.0.1", () => resolve());
            socket.on("error", reject);
            socket.on("close", () => closed.count++);
            // Flowing, so the server's FIN is seen even where an answer came first.
            socket.resume();
            sockets.push(socket);
          }),
      ),
    );
  }
}

describe("connections", () => {
  test("4,000 idle connections: /health with the token still answers fast, others are refused over the cap, idle ones are closed", async () => {
    daemon = await startDaemon({
      dataDir: makeTempDir("agentd-conns-"),
      config: { server: { require_token: true, idle_timeout_s: 3, max_connections_per_client: 256 } },
    });
    const token = readFileSync(join(daemon.dataDir, "token"), "utf8").trim();
    const port = Number(new URL(daemon.url).port);
    const sockets: Socket[] = [];
    const closed = { count: 0 };
    try {
      // Keep-alive connections that made one request: the idle timeout closes them.
      const keptAlive: Socket[] = [];
      const keptClosed = { count: 0 };
      await openIdle(port, 20, keptAlive, keptClosed);
      for (const socket of keptAlive) socket.write("GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      await openIdle(port, 4000, sockets, closed);
      const started = performance.now();
      const health = await request(daemon.url, "/health", { headers: { authorization: `Bearer ${token}` } });
      expect(health.status).toBe(200);
      expect(performance.now() - started).toBeLessThan(2000);
      // The kernel holds connections beyond the listen backlog half-open for a while, and agentd reads
      // its connection table at most every 250 ms: the cap must bite within a bounded time, not at once.
      await openIdle(port, 300, sockets, closed);
      const refused = await waitFor(
        "a request over the cap to be refused",
        async () => {
          // Not /livez: the supervisor's probe is never refused, whoever holds the connections.
          const answer = await fetch(`${daemon!.url}/health`, { signal: AbortSignal.timeout(5000) });
          if (answer.status === 503) return answer;
          await answer.body?.cancel();
          return undefined;
        },
        { timeoutMs: 3000 },
      );
      expect(refused.status).toBe(503);
      expect(refused.headers.get("connection")).toBe("close");
      expect(((await refused.json()) as any).error.code).toBe("too_many_connections");
      await waitFor("the kept-alive connections to be closed by agentd", () => keptClosed.count === 20 || undefined, { timeoutMs: 10_000 });
      // Connections that never send a request line are closed by the server's header timeout.
      await waitFor("the silent connections to be closed by agentd", () => closed.count === 4300 || undefined, { timeoutMs: 30_000 });
      expect((await request(daemon.url, "/livez")).status).toBe(200);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  }, 90_000);
});

function workerChildren(workerPid: number): number {
  const out = Bun.spawnSync(["ps", "-o", "pid=", "--ppid", String(workerPid)]).stdout.toString();
  return out.split("\n").filter((line) => line.trim()).length;
}

describe("a model call longer than the idle timeout", () => {
  test("is not cut while it works, and the connection's idle timeout comes back once it answered", async () => {
    const upstream = startScriptedUpstream();
    try {
      daemon = await startDaemon({
        dataDir: makeTempDir("agentd-idle-"),
        config: { server: { idle_timeout_s: 1 }, providers: [{ name: "slow", base_url: upstream.url }] },
      });
      // Silent for 2.5 s, longer than the 1 s idle timeout, then the answer ("ok"). (Bun checks its
      // timeouts every 4 s: tests/http/connectionLimits.test.ts outlasts a check for each kind of request.)
      upstream.enqueue({ kind: "stall_before_first_byte", ms: 2_500 });
      const socket = connect(Number(new URL(daemon.url).port), "127.0.0.1");
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      let received = "";
      socket.on("data", (chunk) => {
        received += chunk.toString();
      });
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
      const body = JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] });
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
      await waitFor("the answer", () => received.includes('"content":"ok"'), { timeoutMs: 15_000 });
      expect(received.startsWith("HTTP/1.1 200")).toBe(true);
      // Kept alive and silent afterwards: agentd closes it after its idle timeout.
      await closed;
      // A stream silent for longer than the idle timeout between its events runs to its end too.
      upstream.enqueue({ kind: "text", chunks: ["first ", "second"], chunkDelayMs: 1_500 });
      const streamed = await fetch(`${daemon.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-test", stream: true, messages: [{ role: "user", content: "hi" }] }),
      });
      const text = await streamed.text();
      expect(text).toContain('"second"');
      expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    } finally {
      await upstream.close();
    }
  });
});

describe("PTY cap", () => {
  test("1,000 concurrent opens never run more than max_sessions; the rest get a clear error", async () => {
    daemon = await startDaemon({ dataDir: makeTempDir("agentd-ptycap-"), config: { pty: { max_sessions: 32, close_grace_ms: 200 } } });
    const workerPid = daemon.workerPid();
    let most = 0;
    let mostListed = 0;
    let done = false;
    const sampler = (async () => {
      while (!done) {
        most = Math.max(most, workerChildren(workerPid));
        const listed = (await request(daemon!.url, "/api/pty")).body.sessions as unknown[];
        mostListed = Math.max(mostListed, listed.length);
        await Bun.sleep(20);
      }
    })();
    const answers = await Promise.all(
      Array.from({ length: 1000 }, () =>
        request(daemon!.url, "/api/pty", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ cmd: "sleep 60", yield_time_ms: 250 }),
        }),
      ),
    );
    done = true;
    await sampler;
    most = Math.max(most, workerChildren(workerPid));
    const outcomes = new Map<string, number>();
    for (const answer of answers) {
      const key = answer.status === 200 ? "200" : `${answer.status} ${answer.body.error?.code}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    }
    for (const key of outcomes.keys()) expect(["200", "429 pty_limit_reached", "503 pty_slots_busy"]).toContain(key);
    expect(outcomes.get("200")).toBeGreaterThanOrEqual(32);
    expect(most).toBeLessThanOrEqual(32);
    expect(mostListed).toBeLessThanOrEqual(32);
    expect((await request(daemon.url, "/api/pty")).body.sessions.length).toBeLessThanOrEqual(32);
  }, 120_000);
});

describe("write_file", () => {
  const write = (url: string, path: string, content: string) =>
    request(url, "/api/files/write", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path, content }),
    });

  function nobodyFile(dir: string, name: string): string {
    const path = join(dir, name);
    writeFileSync(path, "old\n");
    chownSync(path, NOBODY, NOGROUP);
    chmodSync(path, 0o640);
    return path;
  }

  test("keeps owner, group and mode; writes a symlink's target; keeps hard links; refuses NUL in paths", async () => {
    // The files are nobody's, and so are the commands' rights: write_file acts as the command user.
    daemon = await startDaemon({ dataDir: makeTempDir("agentd-files-"), config: { pty: { run_as: { user: "nobody" } } } });
    const dir = makeTempDir("agentd-files-work-");
    chownSync(dir, NOBODY, NOGROUP);
    const owned = (path: string) => {
      const info = statSync(path);
      return { uid: info.uid, gid: info.gid, mode: (info.mode & 0o7777).toString(8) };
    };
    const nobody640 = { uid: NOBODY, gid: NOGROUP, mode: "640" };

    const plain = nobodyFile(dir, "plain.conf");
    expect((await write(daemon.url, plain, "new\n")).status).toBe(200);
    expect(readFileSync(plain, "utf8")).toBe("new\n");
    expect(owned(plain)).toEqual(nobody640);

    const target = nobodyFile(dir, "target.conf");
    const link = join(dir, "link.conf");
    symlinkSync(target, link);
    expect((await write(daemon.url, link, "through the link\n")).status).toBe(200);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(target);
    expect(readFileSync(target, "utf8")).toBe("through the link\n");
    expect(owned(target)).toEqual(nobody640);

    const first = nobodyFile(dir, "first.conf");
    const second = join(dir, "second.conf");
    linkSync(first, second);
    const inode = statSync(first).ino;
    expect((await write(daemon.url, second, "both names\n")).status).toBe(200);
    expect(readFileSync(first, "utf8")).toBe("both names\n");
    expect(statSync(second).ino).toBe(inode);
    expect(statSync(first).nlink).toBe(2);
    expect(owned(first)).toEqual(nobody640);

    const nul = await write(daemon.url, `${dir}/x\u0000y`, "no");
    expect(nul.status).toBe(400);
    expect(nul.body.error).toMatchObject({ code: "invalid_request", param: "path" });
  }, 60_000);
});

describe("output and queries", () => {
  test("bounded query numbers, a foreign Origin refused, and the CLI escapes control characters", async () => {
    daemon = await startDaemon({ dataDir: makeTempDir("agentd-output-"), config: {} });
    for (const path of [
      "/api/sessions?limit=99999999999999999999",
      "/api/incidents?limit=99999999999999999999",
      "/status/sessions?page=1e400",
    ]) {
      const answer = await request(daemon.url, path, { headers: { accept: "application/json" } });
      expect({ path, status: answer.status, code: answer.body.error?.code }).toEqual({ path, status: 400, code: "invalid_query" });
    }
    const foreign = await request(daemon.url, "/api/pty", {
      method: "POST",
      headers: { "content-type": "application/json", origin: "http://evil.example", "sec-fetch-site": "none" },
      body: JSON.stringify({ cmd: "touch /tmp/should-not-exist" }),
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe("csrf_rejected");
  }, 60_000);

  test("the CLI shows control characters from a daemon's answer escaped, never raw", async () => {
    // What a daemon may relay: a watched log line or a command the model chose, with OSC 52 (set the
    // clipboard) and ESC[2K (erase the line). The status page's own text view already replaces them, so
    // the CLI is asked here of a server that sends them raw.
    const hostile = "line \u001b]52;c;ZXZpbA==\u0007\u001b[2Khidden \u009b31m tab\tend";
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) =>
        new URL(req.url).pathname === "/status"
          ? new Response(`agentd 0.1.0  status PASS\n${hostile}\n`)
          : Response.json({ status: "pass", checks: { [hostile]: [] } }),
    });
    try {
      const url = `http://127.0.0.1:${server.port}`;
      const status = await runAgentd(["status", "--url", url]);
      const health = await runAgentd(["health", "--url", url, "--json"]);
      // JSON escapes C0 itself, but not C1 (U+009B is CSI).
      expect(health.stdout).toContain("\\x9b31m");
      for (const out of [status.stdout, health.stdout]) expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      expect(status.stdout).toContain("\\x1b]52;c;ZXZpbA==\\x07\\x1b[2Khidden \\x9b31m tab\tend");
    } finally {
      await server.stop(true);
    }
  }, 60_000);
});
