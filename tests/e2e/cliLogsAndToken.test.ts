import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, runAgentd, spawnAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// `agentd logs` reading <data_dir>/logs, and token mode: a browser sent to /login, the CLI's own exit code.
// Every command runs from a fresh directory unrelated to the daemon, and must leave it empty.

beforeAll(() => ensureBinary(), 300_000);
afterAll(removeTempDirs);

const line = (ts: number, level: string, event: string, fields: Record<string, unknown> = {}) =>
  `${JSON.stringify({ ts: new Date(ts).toISOString(), level, component: "supervisor", event, ...fields })}\n`;

async function inElsewhere(args: string[], env: Record<string, string> = {}) {
  const cwd = makeTempDir("agentd-cli-elsewhere-");
  // Only the token these runs are given: none unless the test passes one.
  const result = await runAgentd(args, { cwd, env: { HOME: cwd, AGENTD_TOKEN: undefined, ...env } });
  expect(readdirSync(cwd)).toEqual([]);
  return result;
}

describe("agentd logs", () => {
  let dataDir: string;
  const now = Date.now();

  beforeAll(() => {
    dataDir = join(makeTempDir("agentd-logs-"), "data");
    mkdirSync(join(dataDir, "logs"), { recursive: true });
    // An older rotation, then the current file: lines must come out oldest first.
    writeFileSync(join(dataDir, "logs", "agentd.log.1"), line(now - 3 * 3600_000, "warn", "old.warning"));
    writeFileSync(
      join(dataDir, "logs", "agentd.log"),
      line(now - 2 * 3600_000, "error", "two.hours.ago") +
        line(now - 60_000, "info", "recent.info", { pid: 42 }) +
        line(now - 30_000, "warn", "recent.warning", { problem: "disk nearly full" }) +
        line(now - 10_000, "error", "recent.error"),
    );
  });

  test("--level warn --since 10m: only recent warnings and errors, as readable lines", async () => {
    const result = await inElsewhere(["logs", "--data-dir", dataDir, "--level", "warn", "--since", "10m"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d WARN {2}supervisor recent\.warning problem="disk nearly full"$/);
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d ERROR supervisor recent\.error$/);
  }, 60_000);

  test("everything, oldest rotation first; --json prints the lines as written", async () => {
    const result = await inElsewhere(["logs", "--data-dir", dataDir, "--json"]);
    expect(result.code).toBe(0);
    const events = result.stdout
      .trimEnd()
      .split("\n")
      .map((l) => (JSON.parse(l) as { event: string }).event);
    expect(events).toEqual(["old.warning", "two.hours.ago", "recent.info", "recent.warning", "recent.error"]);
  }, 60_000);

  test("-f prints lines appended later, and Ctrl-C (SIGINT) ends it with exit 0", async () => {
    const cwd = makeTempDir("agentd-cli-follow-");
    const proc = await spawnAgentd(["logs", "-f", "--data-dir", dataDir, "--level", "error", "--since", "1m"], {
      cwd,
      env: { HOME: cwd },
    });
    try {
      const reader = proc.stdout.getReader();
      const decoder = new TextDecoder();
      let seen = "";
      const readUntil = async (text: string) => {
        const deadline = Date.now() + 20_000;
        while (!seen.includes(text)) {
          if (Date.now() > deadline) throw new Error(`no "${text}" in: ${seen}`);
          const chunk = await reader.read();
          if (chunk.done) throw new Error(`logs -f ended early: ${seen}`);
          seen += decoder.decode(chunk.value);
        }
      };
      await readUntil("recent.error");
      appendFileSync(join(dataDir, "logs", "agentd.log"), line(Date.now(), "info", "followed.info"));
      appendFileSync(join(dataDir, "logs", "agentd.log"), line(Date.now(), "error", "followed.error"));
      await readUntil("followed.error");
      expect(seen).not.toContain("followed.info");
      reader.releaseLock();
      proc.kill("SIGINT");
      expect(await proc.exited).toBe(0);
    } finally {
      if (proc.exitCode === null) proc.kill("SIGKILL");
    }
    expect(readdirSync(cwd)).toEqual([]);
  }, 60_000);

  test("a data dir without logs: exit 1 and what to do", async () => {
    const result = await inElsewhere(["logs", "--data-dir", join(dataDir, "nope")]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("no log at");
  }, 60_000);
});

describe("token mode", () => {
  let daemon: DaemonProcess;
  let token: string;

  beforeAll(async () => {
    const dataDir = join(makeTempDir("agentd-token-mode-"), "data");
    mkdirSync(dataDir);
    daemon = await startDaemon({ dataDir, config: { server: { require_token: true } } });
    token = readFileSync(join(dataDir, "token"), "utf8").trim();
  }, 120_000);

  afterAll(async () => {
    await daemon?.stop();
  }, 60_000);

  test("a browser asking for /status without the token is sent to /login?next=/status (303); an API client gets the 401", async () => {
    const page = await fetch(`${daemon.url}/status`, { headers: { accept: "text/html,application/xhtml+xml" }, redirect: "manual" });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/login?next=%2Fstatus");
    const sessions = await fetch(`${daemon.url}/status/sessions?x=1`, { headers: { accept: "text/html" }, redirect: "manual" });
    expect(sessions.headers.get("location")).toBe(`/login?next=${encodeURIComponent("/status/sessions?x=1")}`);
    const json = await fetch(`${daemon.url}/status`, { headers: { accept: "application/json" }, redirect: "manual" });
    expect(json.status).toBe(401);
    const login = await fetch(`${daemon.url}/login?next=%2Fstatus`);
    expect(await login.text()).toContain('name="next" value="/status"');
    // Only this site's own paths are followed after signing in.
    const offsite = await fetch(`${daemon.url}/login?next=${encodeURIComponent("//evil.example/x")}`);
    expect(await offsite.text()).toContain('name="next" value="/status"');
    const withToken = await fetch(`${daemon.url}/status`, { headers: { accept: "text/html", authorization: `Bearer ${token}` } });
    expect(withToken.status).toBe(200);
  }, 60_000);

  test("the CLI without the token, or with a wrong one, exits 4 with what to do; health keeps 0 with it", async () => {
    for (const args of [["health"], ["status"], ["incidents"], ["silence", "--list"], ["run", "hello"]]) {
      const missing = await inElsewhere([...args, "--url", daemon.url]);
      expect({ args, code: missing.code }).toEqual({ args, code: 4 });
      expect(missing.stderr).toBe(
        `agentd at ${daemon.url} requires a token: pass the one in its <data_dir>/token with --token or AGENTD_TOKEN\n`,
      );
    }
    const wrong = await inElsewhere(["health", "--url", daemon.url, "--token", "wrong"]);
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain("rejected the token");
    const right = await inElsewhere(["health", "--url", daemon.url], { AGENTD_TOKEN: token });
    expect(right.code).toBe(0);
    const unreachable = await inElsewhere(["health", "--url", "http://127.0.0.1:9"]);
    expect(unreachable.code).toBe(5);
  }, 120_000);
});
