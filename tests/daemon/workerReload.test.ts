import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { parseConfig, type AgentdConfig } from "../../src/core/config/index.ts";
import { configSchema } from "../../src/core/config/schema.ts";
import { createLogger } from "../../src/core/log/index.ts";
import { openStore, type Database } from "../../src/core/store/index.ts";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { WorkerConfigReload } from "../../src/daemon/configReload.ts";
import { createWorkerApp, type WorkerApp } from "../../src/daemon/workerApp.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

// The worker's reload against its real capabilities: every section of the config, changed one key
// at a time, comes back either applied or named as needing a restart — never silently dropped.

const BASE = { providers: [{ name: "first", base_url: "http://127.0.0.1:9/v1", api_key: "k" }] };
const config = (value: Record<string, unknown>): AgentdConfig =>
  parseConfig(JSON.stringify({ ...BASE, ...value }), { file: "agentd.jsonc", env: {} });

/** One change per section (two where the section has both kinds), and what the reload must say. */
const CASES: Array<{ section: string; change: Record<string, unknown>; applied: string[]; needsRestart: string[] }> = [
  { section: "data_dir", change: { data_dir: "/var/lib/elsewhere" }, applied: [], needsRestart: ["data_dir"] },
  { section: "server", change: { server: { port: 7071 } }, applied: [], needsRestart: ["server.port"] },
  { section: "log", change: { log: { level: "debug" } }, applied: [], needsRestart: ["log.level"] },
  { section: "supervisor", change: { supervisor: { restart_max: 9 } }, applied: [], needsRestart: ["supervisor.restart_max"] },
  {
    section: "providers",
    change: { providers: [...BASE.providers, { name: "second", base_url: "http://127.0.0.1:9/v1" }] },
    applied: ["providers"],
    needsRestart: [],
  },
  {
    section: "proxy",
    change: { proxy: { max_attempts: 1, max_body_bytes: 4096 } },
    applied: ["proxy.max_attempts"],
    needsRestart: ["proxy.max_body_bytes"],
  },
  {
    section: "pty",
    change: { pty: { max_sessions: 3, run_as: { user: "nobody" } } },
    applied: ["pty.max_sessions"],
    needsRestart: ["pty.run_as.user"],
  },
  { section: "agent", change: { agent: { max_steps: 3, model: "other" } }, applied: ["agent.max_steps"], needsRestart: ["agent.model"] },
  { section: "approvals", change: { approvals: { policy: { exec: "deny" } } }, applied: ["approvals.policy.exec"], needsRestart: [] },
  {
    section: "services",
    change: { services: [{ name: "web", status: "true", restart: "true" }] },
    applied: [],
    needsRestart: ["services"],
  },
  { section: "watchdog", change: { watchdog: { tick_ms: 500 } }, applied: ["watchdog.tick_ms"], needsRestart: [] },
  {
    section: "hops",
    change: { hops: { connect_timeout_ms: 5000, known_hosts: "/etc/agentd/known_hosts" } },
    applied: ["hops.connect_timeout_ms", "hops.known_hosts"],
    needsRestart: [],
  },
  { section: "alerts", change: { alerts: { resend_interval_s: 30 } }, applied: ["alerts.resend_interval_s"], needsRestart: [] },
  {
    section: "telemetry",
    change: { telemetry: { otlp: { service_name: "other" } } },
    applied: [],
    needsRestart: ["telemetry.otlp.service_name"],
  },
];

/** A uid other than this test's: the command user, as far as the guard knows. */
const NOT_US = process.getuid!() + 1;

let db: Database;
let worker: WorkerApp;
let server: Server<undefined>;
let url: string;

beforeAll(async () => {
  const dataDir = makeTempDir("agentd-worker-reload-");
  db = openStore({ path: `${dataDir}/agentd.db`, migrations: allMigrations });
  worker = await createWorkerApp({
    config: config({}),
    notes: [],
    db,
    dataDir,
    logger: createLogger("test.worker"),
    startedAt: Date.now(),
    supervisorPid: null,
    restarts: 0,
    // This test process serves the app and posts to it: as a person (root, or not the command user).
    commandUid: NOT_US,
  });
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: worker.app.fetch, idleTimeout: 0 });
  url = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server?.stop(true);
  await worker?.services.close();
  db?.close();
  removeTempDirs();
});

describe("the worker's reload covers every config section", () => {
  test("the cases name every section of the schema", () => {
    const sections = Object.keys(configSchema().shape).filter((key) => key !== "$schema");
    expect(CASES.map((c) => c.section).sort()).toEqual(sections.sort());
  });

  for (const { section, change, applied, needsRestart } of CASES) {
    test(`${section}: ${[...applied.map((k) => `${k} applied`), ...needsRestart.map((k) => `${k} needs a restart`)].join(", ")}`, () => {
      expect(worker.services.reloadConfig(config(change))).toEqual({ applied, needsRestart });
      // Back to the start: each case is one change from the same config, and a restart-only key set
      // back is in force again.
      const back = worker.services.reloadConfig(config({}));
      expect(back.needsRestart).toEqual([]);
      expect(back.applied.sort()).toEqual([...applied, ...needsRestart].sort());
    });
  }

  test("nothing changed: nothing applied, nothing to restart", () => {
    expect(worker.services.reloadConfig(config({}))).toEqual({ applied: [], needsRestart: [] });
  });
});

describe("applied settings are the ones in force", () => {
  test("pty.max_sessions: /health counts against the reloaded limit", async () => {
    const health = async () => {
      const response = await fetch(`${url}/health`);
      const body = (await response.json()) as { checks: Record<string, Array<{ output?: string }>> };
      return body.checks["pty:sessions"]?.[0]?.output;
    };
    const opened = await fetch(`${url}/api/pty`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ cmd: "sleep 300", yield_time_ms: 100 }),
    });
    expect(opened.status).toBe(200);
    expect(await health()).toBeUndefined();
    worker.services.reloadConfig(config({ pty: { max_sessions: 1 } }));
    expect(await health()).toBe("1 of at most 1 PTY sessions are open");
    worker.services.reloadConfig(config({}));
    expect(await health()).toBeUndefined();
  });

  test("a restart-only key stays in /health's notes until set back", async () => {
    const notes: string[] = [];
    let next = config({ server: { port: 7071 } });
    const reload = new WorkerConfigReload({
      notes,
      readText: async () => JSON.stringify(next),
      target: worker.services,
      logger: createLogger("test.reload"),
    });
    expect(await reload.reload()).toEqual({ result: "reloaded", applied: [], needs_restart: ["server.port"] });
    expect(notes).toEqual(["config changed, needs a restart to apply: server.port"]);
    // Another reload that changes nothing keeps the note: the running port is still the old one.
    expect(await reload.reload()).toEqual({ result: "reloaded", applied: [], needs_restart: [] });
    expect(notes).toEqual(["config changed, needs a restart to apply: server.port"]);
    next = config({});
    expect(await reload.reload()).toEqual({ result: "reloaded", applied: ["server.port"], needs_restart: [] });
    expect(notes).toEqual([]);
  });
});
