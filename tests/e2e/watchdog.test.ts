import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readLines } from "../../src/core/log/index.ts";
import { waitFor } from "../support/waitFor.ts";

const BINARY = resolve(import.meta.dir, "../../agentd");
const DEADLINE_MS = 60_000;

interface Daemon {
  proc: ReturnType<typeof Bun.spawn>;
  dataDir: string;
  lines: Array<Record<string, unknown>>;
  waitForLine(predicate: (record: Record<string, unknown>) => boolean, after?: number): Promise<Record<string, unknown>>;
}

const started: Daemon[] = [];
const others: Array<ReturnType<typeof Bun.spawn>> = [];
const stoppedPids: number[] = [];

function startDaemon(watchdog: Record<string, unknown>, supervisor: Record<string, unknown> = {}, port = 0): Daemon {
  const dataDir = mkdtempSync(join(tmpdir(), "agentd-wd-e2e-"));
  const configPath = join(dataDir, "agentd.jsonc");
  writeFileSync(configPath, JSON.stringify({ supervisor, watchdog }));
  const proc = Bun.spawn([BINARY, "serve", "--port", String(port), "--config", configPath, "--data-dir", dataDir], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  const lines: Array<Record<string, unknown>> = [];
  void readLines(proc.stdout as ReadableStream<Uint8Array>, (line) => {
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // Not a log line.
    }
  });
  const daemon: Daemon = {
    proc,
    dataDir,
    lines,
    waitForLine: (predicate, after = 0) =>
      waitFor("a log line", () => lines.slice(after).find(predicate), { timeoutMs: DEADLINE_MS, intervalMs: 50 }),
  };
  started.push(daemon);
  return daemon;
}

function incidents(dataDir: string): Array<Record<string, unknown>> {
  const db = new Database(join(dataDir, "agentd.db"), { readonly: true });
  try {
    return db
      .query<Record<string, unknown>, []>("SELECT * FROM incidents ORDER BY id")
      .all()
      .map((row) => ({ ...row, details: JSON.parse(row.details as string) }));
  } finally {
    db.close();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

afterEach(async () => {
  for (const pid of stoppedPids.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
  for (const daemon of started.splice(0)) {
    if (daemon.proc.exitCode === null) daemon.proc.kill("SIGTERM");
    await daemon.proc.exited;
    rmSync(daemon.dataDir, { recursive: true, force: true });
  }
  for (const proc of others.splice(0)) {
    proc.kill("SIGKILL");
    await proc.exited;
  }
});

const fast = {
  probe: { interval_ms: 200, timeout_ms: 500, failure_threshold: 3 },
  tick_ms: 100,
  verify_window_s: 1,
  resolve_after_s: 2,
  restart_grace_ms: 1000,
};

describe("watchdog, end to end against ./agentd", () => {
  beforeAll(() => {
    if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run 'npm run build' first`);
  });

  test("kill -9 of the worker: restarted, incident recorded, verified and auto-resolved", async () => {
    const daemon = startDaemon(fast);
    const first = await daemon.waitForLine((r) => r.event === "http.listening");
    const spawned = daemon.lines.find((r) => r.event === "worker.spawned")!;
    const mark = daemon.lines.length;
    process.kill(spawned.pid as number, "SIGKILL");
    const second = await daemon.waitForLine((r) => r.event === "http.listening", mark);
    expect(second.port).toBe(first.port);
    expect((await fetch(`${second.url}/livez`)).status).toBe(200);
    const incident = await waitFor(
      "the incident to resolve",
      () => incidents(daemon.dataDir).find((i) => i.fingerprint === "worker" && i.state === "resolved"),
      { timeoutMs: DEADLINE_MS, intervalMs: 50 },
    );
    expect(incident).toMatchObject({
      title: "Worker killed by SIGKILL",
      tier: 1,
      action: "restart_worker",
      verdict: "success",
      category: "daemon",
    });
  });

  test("a hung worker (SIGSTOP) fails its probes and is restarted", async () => {
    const daemon = startDaemon(fast);
    await daemon.waitForLine((r) => r.event === "http.listening");
    const pid = daemon.lines.find((r) => r.event === "worker.spawned")!.pid as number;
    const mark = daemon.lines.length;
    process.kill(pid, "SIGSTOP");
    stoppedPids.push(pid);
    const stoppedAt = Date.now();
    await daemon.waitForLine((r) => r.event === "watchdog.action" && r.action === "restart_worker", mark);
    const detectedMs = Date.now() - stoppedAt;
    const listening = await daemon.waitForLine((r) => r.event === "http.listening", mark);
    expect((await fetch(`${listening.url}/livez`)).status).toBe(200);
    expect(alive(pid)).toBe(false);
    // interval × threshold + timeout, with room for a busy machine.
    expect(detectedMs).toBeLessThan(200 * 3 + 500 + 10_000);
    const incident = await waitFor(
      "the verdict",
      () => incidents(daemon.dataDir).find((i) => i.fingerprint === "worker" && i.verdict === "success"),
      { timeoutMs: DEADLINE_MS, intervalMs: 50 },
    );
    expect(incident).toMatchObject({ title: "Worker does not answer /livez", action: "restart_worker" });
  });

  test("a worker hung inside a write (it holds the store's lock) is restarted all the same, the log saying it was not recorded", async () => {
    const daemon = startDaemon(fast);
    await daemon.waitForLine((r) => r.event === "http.listening");
    const pid = daemon.lines.find((r) => r.event === "worker.spawned")!.pid as number;
    const mark = daemon.lines.length;
    // The lock a worker stopped inside a write transaction would hold, held here instead.
    const lock = new Database(join(daemon.dataDir, "agentd.db"));
    lock.run("BEGIN IMMEDIATE");
    process.kill(pid, "SIGSTOP");
    stoppedPids.push(pid);
    try {
      await daemon.waitForLine((r) => r.event === "watchdog.restart_unrecorded" && r.pid === pid, mark);
    } finally {
      lock.run("ROLLBACK");
      lock.close();
    }
    const listening = await daemon.waitForLine((r) => r.event === "http.listening", mark);
    expect((await fetch(`${listening.url}/livez`)).status).toBe(200);
    expect(alive(pid)).toBe(false);
    expect(daemon.proc.exitCode).toBeNull();
  });

  test("port conflict at start: incident names the holder's pid and alerts; nothing of it is killed; the cap stops a crash loop", async () => {
    const holder = Bun.spawn(
      [
        "python3",
        "-c",
        "import socket,sys\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen()\nprint(s.getsockname()[1],flush=True)\nsys.stdin.read()",
      ],
      { stdin: "pipe", stdout: "pipe" },
    );
    others.push(holder);
    const { value } = await holder.stdout.getReader().read();
    const port = Number(new TextDecoder().decode(value).trim());
    const daemon = startDaemon(fast, { restart_max: 2, backoff_initial_ms: 50, backoff_max_ms: 200 }, port);
    expect(await daemon.proc.exited).toBe(1);
    const all = incidents(daemon.dataDir);
    const conflict = all.find((i) => i.fingerprint === "worker")!;
    expect(conflict.title).toContain(`Port ${port} in use by pid ${holder.pid}`);
    expect(conflict).toMatchObject({ severity: "critical", pattern: expect.stringContaining("port.in_use") });
    const alerts = (conflict.details as { alerts: Array<{ message: string }> }).alerts;
    expect(alerts[0]!.message).toContain(`rule alert-port-in-use: Port ${port} in use by pid ${holder.pid}`);
    expect(all.find((i) => i.fingerprint === "supervisor")).toMatchObject({ title: "Worker crash loop", action: "alert", state: "open" });
    expect(daemon.lines.filter((r) => r.event === "watchdog.alert").length).toBeGreaterThanOrEqual(2);
    expect(alive(holder.pid)).toBe(true);
  });

  test("SIGTERM to the supervisor stops everything with exit 0 and no incident", async () => {
    const daemon = startDaemon(fast);
    await daemon.waitForLine((r) => r.event === "http.listening");
    daemon.proc.kill("SIGTERM");
    expect(await daemon.proc.exited).toBe(0);
    expect(incidents(daemon.dataDir)).toEqual([]);
  });
});
