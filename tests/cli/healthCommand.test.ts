import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { HealthCheck } from "../../src/core/health/index.ts";
import { runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { startApp, type RunningApp } from "../http/appHarness.ts";

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});
afterAll(removeTempDirs);

const TOKEN = "cli-test-token-0123456789";
const withChecks = (...checks: HealthCheck[]) => ({ healthSources: { all: () => checks } });
const health = (args: string[], env: Record<string, string> = {}) => {
  const dir = makeTempDir("agentd-cli-");
  return runAgentd(["health", ...args], { cwd: dir, env: { HOME: dir, ...env } });
};

/** A port nothing listens on: one the OS just gave out and took back. */
function closedPort(): number {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = server.port!;
  server.stop(true);
  return port;
}

describe("agentd health", () => {
  test("pass: exit 0 and one line on stdout", async () => {
    running = startApp(withChecks({ key: "store:writable", status: "pass" }, { key: "worker:memory", status: "pass" }));
    const result = await health(["--url", running.url]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^agentd pass 2 checks, 0 failing, up \d+s\n$/);
  }, 60_000);

  test("warn: still exit 0", async () => {
    running = startApp(withChecks({ key: "disk:free", status: "warn" }));
    const result = await health(["--url", running.url]);
    expect(result.code).toBe(0);
    expect(result.stdout).toStartWith("agentd warn 1 checks, 0 failing");
  }, 60_000);

  test("fail: exit 1 and the line on stderr", async () => {
    running = startApp(withChecks({ key: "store:writable", status: "fail" }, { key: "worker:memory", status: "pass" }));
    const result = await health(["--url", running.url]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^agentd fail 2 checks, 1 failing, up \d+s\n$/);
  }, 60_000);

  test("--json prints the health document itself", async () => {
    running = startApp(withChecks({ key: "store:writable", status: "pass", observedValue: true }));
    const result = await health(["--url", running.url, "--json"]);
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout) as Record<string, any>;
    expect(doc.status).toBe("pass");
    expect(doc.version).toBe("9.9.9-test");
    expect(doc.checks["store:writable"][0]).toMatchObject({ status: "pass", observedValue: true });
    expect(result.stdout.trimEnd().split("\n")).toHaveLength(1);
  }, 60_000);

  test("--json on a failing agentd prints the document and exits 1", async () => {
    running = startApp(withChecks({ key: "store:writable", status: "fail" }));
    const result = await health(["--url", running.url, "--json"]);
    expect(result.code).toBe(1);
    expect((JSON.parse(result.stdout) as { status: string }).status).toBe("fail");
  }, 60_000);

  test("nothing listening: exit 5 with a clear message, no stack; a usage error stays 2", async () => {
    const port = closedPort();
    const result = await health(["--url", `http://127.0.0.1:${port}`]);
    expect(result.code).toBe(5);
    expect(result.stdout).toBe("");
    expect(result.stderr).toStartWith(`Cannot reach agentd at http://127.0.0.1:${port}: `);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    const json = await health(["--url", `http://127.0.0.1:${port}`, "--json"]);
    expect(json.code).toBe(5);
    const miscalled = await health(["--url", `http://127.0.0.1:${port}`, "--wait", "soon"]);
    expect(miscalled.code).toBe(2);
  }, 60_000);

  test("AGENTD_URL is used when --url is not given", async () => {
    running = startApp();
    const result = await health([], { AGENTD_URL: running.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toStartWith("agentd pass");
  }, 60_000);

  test("the local daemon is found through <data_dir>/ready.json", async () => {
    running = startApp();
    const dataDir = makeTempDir();
    writeFileSync(
      join(dataDir, "ready.json"),
      JSON.stringify({
        pid: 1,
        supervisor_pid: null,
        bind: "127.0.0.1",
        port: running.server.port,
        url: running.url,
        version: "x",
        started_at: "",
      }),
    );
    const result = await health(["--data-dir", dataDir]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  }, 60_000);

  test("a token-protected agentd without the token, or with a wrong one: exit 4 (not 1, 'fail'), one clear line", async () => {
    running = startApp({ requiredToken: TOKEN });
    const missing = await health(["--url", running.url]);
    expect(missing.stderr).toBe(
      `agentd at ${running.url} requires a token: pass the one in its <data_dir>/token with --token or AGENTD_TOKEN\n`,
    );
    expect(missing.code).toBe(4);
    const wrong = await health(["--url", running.url, "--token", "not-the-token"]);
    expect(wrong.stderr).toBe(
      `agentd at ${running.url} rejected the token: pass the one in its <data_dir>/token with --token or AGENTD_TOKEN\n`,
    );
    expect(wrong.code).toBe(4);
  }, 60_000);

  test("a token that begins with a dash (a base64url token does, one in 64) is taken after --token as it is", async () => {
    const dashed = `-${TOKEN}`;
    running = startApp({ requiredToken: dashed });
    const separate = await health(["--url", running.url, "--token", dashed]);
    expect({ code: separate.code, stderr: separate.stderr }).toEqual({ code: 0, stderr: "" });
    const joined = await health(["--url", running.url, `--token=${dashed}`]);
    expect(joined.code).toBe(0);
  }, 60_000);

  test("a token-protected agentd passes with --token, AGENTD_TOKEN or <data_dir>/token", async () => {
    running = startApp({ requiredToken: TOKEN });
    const withFlag = await health(["--url", running.url, "--token", TOKEN]);
    expect(withFlag.code).toBe(0);
    const withEnv = await health(["--url", running.url], { AGENTD_TOKEN: TOKEN });
    expect(withEnv.code).toBe(0);
    const dataDir = makeTempDir();
    writeFileSync(join(dataDir, "token"), `${TOKEN}\n`, { mode: 0o600 });
    writeFileSync(
      join(dataDir, "ready.json"),
      JSON.stringify({
        pid: 1,
        supervisor_pid: null,
        bind: "0.0.0.0",
        port: running.server.port,
        url: running.url,
        version: "x",
        started_at: "",
      }),
    );
    const fromFile = await health(["--data-dir", dataDir]);
    expect(fromFile.code).toBe(0);
  }, 60_000);

  test("--wait keeps asking until the health passes", async () => {
    let asked = 0;
    let healthy = false;
    running = startApp({
      healthSources: {
        store: () => {
          asked++;
          return [{ key: "store:writable", status: healthy ? "pass" : "fail" }];
        },
      },
    });
    const pending = health(["--url", running.url, "--wait", "60s"]);
    await waitFor("the command to ask twice", () => asked >= 2, { timeoutMs: 60_000 });
    healthy = true;
    const result = await pending;
    expect(result.code).toBe(0);
    expect(result.stdout).toStartWith("agentd pass");
    expect(asked).toBeGreaterThanOrEqual(3);
  }, 90_000);

  test("--wait gives up at its deadline with the last answer's exit code", async () => {
    running = startApp(withChecks({ key: "store:writable", status: "fail" }));
    const result = await health(["--url", running.url, "--wait", "1500ms"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toStartWith("agentd fail");
  }, 60_000);
});

describe("agentd status", () => {
  test("nothing listening: exit 5", async () => {
    const port = closedPort();
    const dir = makeTempDir();
    const result = await runAgentd(["status", "--url", `http://127.0.0.1:${port}`], { cwd: dir, env: { HOME: dir } });
    expect(result.code).toBe(5);
    expect(result.stderr).toStartWith(`Cannot reach agentd at http://127.0.0.1:${port}: `);
  }, 60_000);

  test("a refused token: exit 4 with what to do, in status, incidents and silence alike", async () => {
    running = startApp({ requiredToken: TOKEN });
    const dir = makeTempDir();
    for (const args of [["status"], ["incidents"], ["silence", "--list"]]) {
      const result = await runAgentd([...args, "--url", running.url], { cwd: dir, env: { HOME: dir } });
      expect({ args, code: result.code }).toEqual({ args, code: 4 });
      expect(result.stderr).toBe(
        `agentd at ${running.url} requires a token: pass the one in its <data_dir>/token with --token or AGENTD_TOKEN\n`,
      );
    }
  }, 60_000);
});
