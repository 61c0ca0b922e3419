import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, runAgentd, spawnAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";

// End to end with the compiled ./agentd: the supervisor, its worker, and the CLI against them.

interface Ready {
  pid: number;
  supervisor_pid: number;
  port: number;
  url: string;
}

interface Daemon {
  child: Subprocess<"ignore", "pipe", "pipe">;
  dataDir: string;
  stdout: () => string;
  stderr: () => string;
  /** Both pipes read to the end (after the child exits). */
  drained: Promise<void>;
}

const started: Daemon[] = [];
const listeners: ReturnType<typeof Bun.serve>[] = [];

/** Reads a pipe continuously, so a chatty child never blocks on a full pipe. */
function collect(stream: ReadableStream<Uint8Array>) {
  let text = "";
  const done = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  })();
  return { text: () => text, done };
}

async function startServe(args: string[], dataDir = makeTempDir("agentd-e2e-"), binary?: string): Promise<Daemon> {
  const child = await spawnAgentd(["serve", "--data-dir", dataDir, ...args], {
    cwd: dataDir,
    env: { HOME: dataDir },
    ...(binary ? { binary } : {}),
  });
  const out = collect(child.stdout);
  const err = collect(child.stderr);
  const daemon: Daemon = {
    child,
    dataDir,
    stdout: out.text,
    stderr: err.text,
    drained: Promise.all([out.done, err.done]).then(() => undefined),
  };
  started.push(daemon);
  return daemon;
}

function readReady(dataDir: string): Ready | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, "ready.json"), "utf8")) as Ready;
  } catch {
    return undefined;
  }
}

function waitForReady(daemon: Daemon, accept: (ready: Ready) => boolean = () => true): Promise<Ready> {
  return waitFor(
    "ready.json",
    () => {
      if (daemon.child.exitCode !== null)
        throw new Error(`agentd serve exited with ${daemon.child.exitCode}: ${daemon.stderr()}\n${daemon.stdout()}`);
      const ready = readReady(daemon.dataDir);
      return ready && accept(ready) ? ready : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

/** Pids of every process whose command line names this data dir (the daemon's, and nothing else's). */
function processesUsing(dataDir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmdline.includes(dataDir) && isProcessAlive(Number(entry))) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

function logRecords(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

beforeAll(async () => {
  await ensureBinary();
}, 120_000);

afterEach(async () => {
  for (const listener of listeners.splice(0)) listener.stop(true);
});

afterAll(async () => {
  for (const daemon of started) {
    const ready = readReady(daemon.dataDir);
    if (daemon.child.exitCode === null) daemon.child.kill("SIGKILL");
    if (ready && isProcessAlive(ready.pid)) process.kill(ready.pid, "SIGKILL");
    for (const pid of processesUsing(daemon.dataDir)) process.kill(pid, "SIGKILL");
  }
  removeTempDirs();
});

describe("agentd serve: supervisor and worker", () => {
  let daemon: Daemon;
  let first: Ready;

  test("starts on a free port, writes ready.json, and /health passes", async () => {
    daemon = await startServe(["--port", "0"]);
    first = await waitForReady(daemon);
    expect(first.supervisor_pid).toBe(daemon.child.pid);
    expect(first.pid).not.toBe(daemon.child.pid);
    expect(first.port).toBeGreaterThan(0);
    expect(first.url).toBe(`http://127.0.0.1:${first.port}`);

    const response = await fetch(`${first.url}/health`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/health+json");
    const doc = (await response.json()) as { status: string; checks: Record<string, Array<{ status: string }>> };
    expect(doc.status).toBe("pass");
    expect(doc.checks["store:writable"]![0]!.status).toBe("pass");
    expect((await fetch(`${first.url}/livez`)).status).toBe(200);
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
    expect(existsSync(join(daemon.dataDir, "agentd.db"))).toBe(true);
  }, 90_000);

  test("agentd health --url exits 0 and prints one line", async () => {
    const result = await runAgentd(["health", "--url", first.url], { cwd: daemon.dataDir, env: { HOME: daemon.dataDir } });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^agentd pass \d+ checks, 0 failing, up \d+\w*\n$/);
    const viaDataDir = await runAgentd(["health", "--data-dir", daemon.dataDir, "--json"], {
      cwd: daemon.dataDir,
      env: { HOME: daemon.dataDir },
    });
    expect(viaDataDir.code).toBe(0);
    expect((JSON.parse(viaDataDir.stdout) as { status: string }).status).toBe("pass");
  }, 60_000);

  test("once up, both processes drop their startup code from memory and go on serving", async () => {
    const released = await waitFor("both processes to release their startup code", () => {
      const lines = logRecords(daemon.stdout()).filter((r) => r.event === "memory.code_released");
      return lines.length === 2 ? lines : undefined;
    });
    expect(released.map((r) => r.component).sort()).toEqual(["supervisor", "worker"]);
    for (const record of released) {
      expect(record.after).toEqual(["start"]);
      expect(record.released_kb as number).toBeGreaterThan(1024);
      expect(record.rss_kb_after as number).toBeLessThan((record.rss_kb_before as number) - 1024);
    }
    expect(logRecords(daemon.stdout()).filter((r) => r.event === "background.failed")).toEqual([]);
    const health = (await (await fetch(`${first.url}/health`)).json()) as { status: string };
    expect(health.status).toBe("pass");
  }, 60_000);

  test("the supervisor exec'd itself without the optimizing JIT; the worker, which serves the proxy, has it", () => {
    const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    // Its pid is the one started: the exec replaced the process, it did not start another.
    expect(environ(daemon.child.pid)).toEqual(expect.arrayContaining(["BUN_JSC_useDFGJIT=0", "AGENTD_SUPERVISOR_JIT=1"]));
    expect(environ(first.pid).filter((v) => v.startsWith("BUN_JSC_") || v.startsWith("AGENTD_SUPERVISOR_JIT="))).toEqual([]);
    expect(logRecords(daemon.stdout()).filter((r) => r.event === "supervisor.optimizing_jit_kept")).toEqual([]);
  });

  test("kill -9 of the worker: the supervisor starts a new one on the same port", async () => {
    process.kill(first.pid, "SIGKILL");
    const second = await waitForReady(daemon, (ready) => ready.pid !== first.pid);
    expect(second.port).toBe(first.port);
    expect(second.supervisor_pid).toBe(daemon.child.pid);
    await waitFor("the old worker to be gone", () => !isProcessAlive(first.pid));
    const livez = await fetch(`${second.url}/livez`);
    expect(livez.status).toBe(200);
    expect(await livez.text()).toBe("ok\n");
    const metrics = await (await fetch(`${second.url}/metrics`)).text();
    expect(metrics).toContain("\nagentd_worker_restarts_total 1\n");

    const db = new Database(join(daemon.dataDir, "agentd.db"), { strict: true });
    db.run("PRAGMA busy_timeout = 5000");
    const exits = db.query<{ fields: string }, []>("SELECT fields FROM events WHERE event = 'worker.exit'").all();
    db.close();
    expect(exits).toHaveLength(1);
    expect(JSON.parse(exits[0]!.fields)).toMatchObject({ pid: first.pid, signal: "SIGKILL" });
    const records = logRecords(daemon.stdout());
    expect(records.some((r) => r.event === "worker.restart_scheduled" && r.attempt === 1 && r.delay_ms === 0)).toBe(true);
  }, 90_000);

  test("SIGTERM: both processes exit, the supervisor with 0, and nothing is left behind", async () => {
    const worker = readReady(daemon.dataDir)!;
    daemon.child.kill("SIGTERM");
    const code = await daemon.child.exited;
    await daemon.drained;
    expect(daemon.stderr()).toBe("");
    expect(code).toBe(0);
    await waitFor("the worker to be gone", () => !isProcessAlive(worker.pid), { timeoutMs: 30_000 });
    expect(processesUsing(daemon.dataDir)).toEqual([]);
    expect(existsSync(join(daemon.dataDir, "ready.json"))).toBe(false);
    const events = logRecords(daemon.stdout()).map((r) => r.event);
    expect(events).toContain("worker.stopping");
    expect(events).toContain("worker.stopped");
    expect(events.at(-1)).toBe("supervisor.stopped");
    const logFile = readFileSync(join(daemon.dataDir, "logs", "agentd.log"), "utf8");
    expect(logFile).toContain('"event":"supervisor.stopped"');
    expect(logFile).toContain('"event":"http.listening"');
  }, 90_000);
});

describe("agentd serve: a supervisor killed with SIGKILL", () => {
  test("its orphaned worker stops by itself, frees the port and removes ready.json", async () => {
    const daemon = await startServe(["--port", "0"]);
    const ready = await waitForReady(daemon);
    daemon.child.kill("SIGKILL");
    await daemon.child.exited;
    await waitFor("the orphaned worker to stop", () => !isProcessAlive(ready.pid), { timeoutMs: 30_000 });
    expect(existsSync(join(daemon.dataDir, "ready.json"))).toBe(false);
    const again = Bun.serve({ hostname: "127.0.0.1", port: ready.port, fetch: () => new Response("free") });
    listeners.push(again);
    expect(again.port).toBe(ready.port);
  }, 90_000);
});

describe("agentd serve: started through a symlink", () => {
  test("the supervisor keeps the name it was started by across its exec (ps, pidof and pgrep read it)", async () => {
    const dir = makeTempDir("agentd-e2e-link-");
    const link = join(dir, "agentd");
    symlinkSync(await ensureBinary(), link);
    const daemon = await startServe(["--port", "0"], undefined, link);
    await waitForReady(daemon);
    const { child } = daemon;
    expect(readFileSync(`/proc/${child.pid}/environ`, "utf8").split("\0")).toContain("AGENTD_SUPERVISOR_JIT=1");
    expect(readFileSync(`/proc/${child.pid}/comm`, "utf8")).toBe("agentd\n");
    expect(readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0").slice(0, 2)).toEqual([link, "serve"]);
  }, 90_000);
});

describe("agentd serve: refusals", () => {
  test("a bad config: exit 2, file:line:col: message on stderr, no worker started", async () => {
    const dataDir = makeTempDir("agentd-e2e-");
    const config = join(dataDir, "agentd.jsonc");
    writeFileSync(config, '{\n  // a typo\n  "server": { "prot": 8080 }\n}\n');
    const daemon = await startServe(["--config", config, "--port", "0"], dataDir);
    const code = await daemon.child.exited;
    await daemon.drained;
    expect(code).toBe(2);
    expect(daemon.stderr()).toBe(`${config}:3:15: server.prot: unknown key "prot"; did you mean "port"?\n`);
    expect(existsSync(join(dataDir, "ready.json"))).toBe(false);
  }, 60_000);

  test("a worker that cannot start (its port is taken): the supervisor gives up after the cap, exits non-zero, and records a crash_loop incident", async () => {
    const taken = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("someone else") });
    listeners.push(taken);
    const dataDir = makeTempDir("agentd-e2e-");
    const config = join(dataDir, "agentd.jsonc");
    writeFileSync(config, JSON.stringify({ supervisor: { backoff_initial_ms: 10, backoff_max_ms: 50 } }));
    const daemon = await startServe(["--config", config, "--port", String(taken.port)], dataDir);
    const code = await daemon.child.exited;
    await daemon.drained;
    expect(code).toBe(1);
    expect(processesUsing(dataDir)).toEqual([]);

    const records = logRecords(daemon.stdout());
    const spawned = records.filter((r) => r.event === "worker.spawned");
    expect(spawned).toHaveLength(6);
    const listenFailures = records.filter((r) => r.event === "http.listen_failed");
    expect(listenFailures).toHaveLength(6);
    expect(listenFailures[0]).toMatchObject({ level: "error", component: "worker", port: taken.port, cause: "port_in_use" });
    const crashLoop = records.find((r) => r.event === "supervisor.crash_loop");
    expect(crashLoop).toMatchObject({ level: "error", restarts: 5 });
    expect(String(crashLoop!.reason)).toContain("worker exited 6 times within 600s; not restarting (last exit code 1)");
    expect(records.at(-1)).toMatchObject({ event: "supervisor.stopped", exit_code: 1 });

    const db = new Database(join(dataDir, "agentd.db"), { readonly: true, strict: true });
    const incidents = db
      .query<{ title: string; category: string; severity: string; state: string; details: string }, []>(
        "SELECT title, category, severity, state, details FROM incidents",
      )
      .all();
    const exits = db.query<{ n: number }, []>("SELECT count(*) AS n FROM events WHERE event = 'worker.exit'").get()!.n;
    db.close();
    // Other incidents (the watchdog's view of each exit) may be there too; exactly one is the crash loop.
    const crashLoops = incidents.filter((incident) => (JSON.parse(incident.details) as { signal?: string }).signal === "crash_loop");
    expect(crashLoops).toHaveLength(1);
    expect(crashLoops[0]).toMatchObject({ title: "Worker crash loop", category: "daemon", severity: "critical", state: "open" });
    expect(exits).toBe(6);
    // The listener the test made was never disturbed.
    expect(await (await fetch(`http://127.0.0.1:${taken.port}/`)).text()).toBe("someone else");
  }, 120_000);
});

// Draining an in-flight request on SIGTERM is not tested here: the foundation's worker has no
// route that stays in flight long enough to be caught by a stop (every route answers at once).
