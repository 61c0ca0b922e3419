import { afterAll, afterEach, describe, expect, test } from "bun:test";
import type { Server, Subprocess } from "bun";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server as NetServer } from "node:net";
import { join } from "node:path";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { openStore, type Database } from "../../src/core/store/index.ts";
import { runCheck, type CheckContext } from "../../src/watchdog/checks/checkRunners.ts";
import { CheckScheduler, readCheckRows } from "../../src/watchdog/checks/checkScheduler.ts";
import type { Signal } from "../../src/watchdog/checks/signal.ts";
import { checkConfigSchema, watchdogConfigSchema } from "../../src/core/config/sections/watchdogConfig.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";

const servers: Server<undefined>[] = [];
const listeners: NetServer[] = [];
const children: Subprocess[] = [];
const dbs: Database[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) server.stop(true);
  for (const listener of listeners.splice(0)) await new Promise((resolve) => listener.close(resolve));
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await child.exited;
  }
  for (const db of dbs.splice(0)) db.close();
});
afterAll(removeTempDirs);

const noWorker: CheckContext = { workerPid: () => undefined };
const check = (input: Record<string, unknown>) => checkConfigSchema().parse({ name: "probe", ...input });

/** A port nothing listens on: one the OS just gave out and took back. */
function closedPort(): number {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = server.port!;
  server.stop(true);
  return port;
}

async function openListener(): Promise<number> {
  const listener = createServer((socket) => socket.end());
  listeners.push(listener);
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  return (listener.address() as { port: number }).port;
}

describe("http check", () => {
  test("passes on the expected status, fails once the server answers 500", async () => {
    let calls = 0;
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => (++calls === 1 ? new Response("all good") : new Response("boom", { status: 500 })),
    });
    servers.push(server);
    const http = check({ type: "http", url: `http://127.0.0.1:${server.port}/health` });
    expect(await runCheck(http, noWorker)).toEqual({ ok: true, detail: "HTTP 200" });
    expect(await runCheck(http, noWorker)).toEqual({ ok: false, detail: "HTTP 500, expected 200" });
    expect(calls).toBe(2);
  });

  test("expect_body is a regular expression over the body", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({ status: "degraded", version: "1.2.3" }) });
    servers.push(server);
    const url = `http://127.0.0.1:${server.port}/`;
    expect(await runCheck(check({ type: "http", url, expect_body: '"version":"\\d+\\.\\d+' }), noWorker)).toMatchObject({ ok: true });
    expect(await runCheck(check({ type: "http", url, expect_body: '"status":"(ok|pass)"' }), noWorker)).toEqual({
      ok: false,
      detail: 'body does not match /"status":"(ok|pass)"/',
    });
  });

  test("a server that does not answer within timeout_ms fails", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Promise<Response>(() => {}) });
    servers.push(server);
    const outcome = await runCheck(check({ type: "http", url: `http://127.0.0.1:${server.port}/`, timeout_ms: 200 }), noWorker);
    expect(outcome.ok).toBe(false);
    expect(outcome.detail.toLowerCase()).toContain("time");
  });

  test("a server that is not there is a failed check, not a throw", async () => {
    const outcome = await runCheck(check({ type: "http", url: `http://127.0.0.1:${closedPort()}/`, timeout_ms: 5000 }), noWorker);
    expect(outcome.ok).toBe(false);
    expect(outcome.detail.length).toBeGreaterThan(0);
  });
});

describe("tcp check", () => {
  test("an open loopback port passes, a closed one fails", async () => {
    const open = await openListener();
    expect(await runCheck(check({ type: "tcp", port: open }), noWorker)).toEqual({ ok: true, detail: `connected to 127.0.0.1:${open}` });
    const closed = closedPort();
    const outcome = await runCheck(check({ type: "tcp", port: closed }), noWorker);
    expect(outcome.ok).toBe(false);
    expect(outcome.detail).toStartWith(`127.0.0.1:${closed}: `);
    expect(outcome.detail).toContain("ECONNREFUSED");
  });
});

describe("command check", () => {
  test("exit 0 passes, exit 3 fails with its stderr; expect_exit 3 makes exit 3 the pass", async () => {
    expect(await runCheck(check({ type: "command", argv: ["sh", "-c", "exit 0"] }), noWorker)).toEqual({ ok: true, detail: "exit 0" });
    expect(await runCheck(check({ type: "command", argv: ["sh", "-c", "echo disk is sad >&2; exit 3"] }), noWorker)).toEqual({
      ok: false,
      detail: "exit 3, expected 0: disk is sad",
    });
    expect(await runCheck(check({ type: "command", argv: ["sh", "-c", "exit 3"], expect_exit: 3 }), noWorker)).toEqual({
      ok: true,
      detail: "exit 3",
    });
  });

  test("a command past its timeout is killed and fails", async () => {
    const outcome = await runCheck(check({ type: "command", argv: ["sleep", "30"], timeout_ms: 300 }), noWorker);
    expect(outcome).toEqual({ ok: false, detail: "sleep timed out after 300 ms" });
  });

  test("a program that does not exist fails the check", async () => {
    const outcome = await runCheck(check({ type: "command", argv: ["/nonexistent/agentd-check-program"] }), noWorker);
    expect(outcome.ok).toBe(false);
  });
});

describe("process check", () => {
  test("a pidfile's process passes while it runs and fails once killed", async () => {
    const dir = makeTempDir("agentd-check-");
    const pidfile = join(dir, "sleeper.pid");
    const sleeper = Bun.spawn(["sleep", "300"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    children.push(sleeper);
    writeFileSync(pidfile, `${sleeper.pid}\n`);
    const byPidfile = check({ type: "process", pidfile });
    expect(await runCheck(byPidfile, noWorker)).toEqual({ ok: true, detail: `pid ${sleeper.pid} alive` });

    sleeper.kill("SIGKILL");
    await sleeper.exited;
    await waitFor("the sleeper to be gone", () => !isProcessAlive(sleeper.pid));
    expect(await runCheck(byPidfile, noWorker)).toEqual({ ok: false, detail: `pid ${sleeper.pid} from ${pidfile} is not running` });
  });

  test("a missing or empty pidfile fails", async () => {
    const dir = makeTempDir("agentd-check-");
    const missing = await runCheck(check({ type: "process", pidfile: join(dir, "absent.pid") }), noWorker);
    expect(missing.ok).toBe(false);
    expect(missing.detail).toContain("ENOENT");
    const empty = join(dir, "empty.pid");
    writeFileSync(empty, "");
    expect(await runCheck(check({ type: "process", pidfile: empty }), noWorker)).toEqual({ ok: false, detail: `${empty} holds no pid` });
  });

  test("by name: a running program passes, an unknown name fails", async () => {
    const sleeper = Bun.spawn(["sleep", "300"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    children.push(sleeper);
    await waitFor("the child to run sleep", () => readFileSync(`/proc/${sleeper.pid}/comm`, "utf8").trim() === "sleep");
    expect(await runCheck(check({ type: "process", process_name: "sleep" }), noWorker)).toMatchObject({ ok: true });
    expect(await runCheck(check({ type: "process", process_name: "agentd-no-such-proc" }), noWorker)).toEqual({
      ok: false,
      detail: "no process named agentd-no-such-proc",
    });
    expect(await runCheck(check({ type: "process" }), noWorker)).toEqual({
      ok: false,
      detail: "process check needs process_name or pidfile",
    });
  });
});

describe("disk check", () => {
  test("min_free_percent 0 always passes, 100 always fails", async () => {
    const dir = makeTempDir("agentd-check-");
    const pass = await runCheck(check({ type: "disk", path: dir, min_free_percent: 0 }), noWorker);
    expect(pass.ok).toBe(true);
    expect(pass.detail).toMatch(new RegExp(`^\\d+\\.\\d% free on ${dir}$`));
    const fail = await runCheck(check({ type: "disk", path: dir, min_free_percent: 100 }), noWorker);
    expect(fail.ok).toBe(false);
    expect(fail.detail).toEndWith(", below 100%");
  });

  test("a path that does not exist fails", async () => {
    const outcome = await runCheck(check({ type: "disk", path: "/nonexistent/agentd-disk", min_free_percent: 0 }), noWorker);
    expect(outcome.ok).toBe(false);
  });
});

describe("memory check", () => {
  test("a tiny limit fails, a generous one passes, no worker passes", async () => {
    const self: CheckContext = { workerPid: () => process.pid };
    const tiny = await runCheck(check({ type: "memory", max_worker_rss_mb: 0.001 }), self);
    expect(tiny.ok).toBe(false);
    expect(tiny.detail).toMatch(/^worker RSS \d+ MiB \(limit 0\.001 MiB\)$/);
    expect((await runCheck(check({ type: "memory", max_worker_rss_mb: 1_000_000 }), self)).ok).toBe(true);
    expect(await runCheck(check({ type: "memory", max_worker_rss_mb: 0.001 }), noWorker)).toEqual({
      ok: true,
      detail: "worker not running",
    });
  });
});

describe("scheduled checks are debounced", () => {
  test("the state changes only after failure_threshold failures, and back after success_threshold successes", async () => {
    const dir = makeTempDir("agentd-check-");
    const marker = join(dir, "healthy");
    writeFileSync(marker, "");
    const db = openStore({ path: ":memory:", migrations: allMigrations });
    dbs.push(db);
    const signals: Signal[] = [];
    const config = watchdogConfigSchema().parse({
      checks: [{ type: "command", name: "marker", argv: ["test", "-e", marker], failure_threshold: 3, success_threshold: 2 }],
    });
    let now = 1_000_000;
    const scheduler = new CheckScheduler(
      config.checks,
      config.flapping,
      noWorker,
      (s) => signals.push(s),
      db,
      () => now,
    );
    const state = () => scheduler.rows()[0]!.state;

    expect(state()).toBe("unknown");
    await scheduler.runOnce("marker");
    expect(state()).toBe("pass");
    expect(readCheckRows(db)).toEqual([expect.objectContaining({ name: "marker", state: "pass", last_change: now })]);

    rmSync(marker);
    for (const expected of ["pass", "pass", "fail"]) {
      now += 1000;
      await scheduler.runOnce("marker");
      expect(state()).toBe(expected as "pass" | "fail");
    }
    expect(scheduler.failing("marker")).toBe(true);
    expect(signals).toHaveLength(1);
    expect(signals[0]).toMatchObject({
      id: "check.command",
      component: "check:marker",
      title: "Check marker failing",
      severity: "error",
      category: "daemon",
      ts: now,
      fields: { check: "marker" },
    });
    expect(readCheckRows(db)).toEqual([expect.objectContaining({ name: "marker", kind: "command", state: "fail", last_change: now })]);

    now += 1000;
    await scheduler.runOnce("marker");
    expect(state()).toBe("fail");
    expect(signals).toHaveLength(1);

    writeFileSync(marker, "");
    now += 1000;
    await scheduler.runOnce("marker");
    expect(state()).toBe("fail");
    now += 1000;
    await scheduler.runOnce("marker");
    expect(state()).toBe("pass");
    expect(scheduler.failing("marker")).toBe(false);
    // Recovery is not a new signal: the watchdog resolves the incident on its own tick.
    expect(signals).toHaveLength(1);
    expect(readCheckRows(db)).toEqual([expect.objectContaining({ state: "pass", last_change: now, output: "exit 0" })]);
  });

  test("what a check printed is redacted before the page and the store see it", async () => {
    const config = watchdogConfigSchema().parse({
      checks: [
        { type: "command", name: "leaky", argv: ["sh", "-c", "echo api_key=sk-live-abcdefghij123456; exit 1"], failure_threshold: 1 },
      ],
    });
    const scheduler = new CheckScheduler(config.checks, config.flapping, noWorker, () => {}, undefined);
    await scheduler.runOnce("leaky");
    const output = scheduler.rows()[0]!.output ?? "";
    expect(output).toContain("exit 1");
    expect(output).not.toContain("abcdefghij123456");
  });

  test("a disk check's failure is a config_state signal", async () => {
    const dir = makeTempDir("agentd-check-");
    const signals: Signal[] = [];
    const config = watchdogConfigSchema().parse({
      checks: [{ type: "disk", name: "data", path: dir, min_free_percent: 100, failure_threshold: 1 }],
    });
    const scheduler = new CheckScheduler(config.checks, config.flapping, noWorker, (s) => signals.push(s), undefined);
    await scheduler.runOnce("data");
    expect(signals).toEqual([expect.objectContaining({ id: "check.disk", category: "config_state", component: "check:data" })]);
  });
});
