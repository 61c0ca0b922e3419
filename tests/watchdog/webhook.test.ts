import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import type { Server } from "bun";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { createLogger, setLogSink } from "../../src/core/log/index.ts";
import { openStore, type Database } from "../../src/core/store/index.ts";
import { HttpProxyAdmin } from "../../src/watchdog/actions/proxyAdmin.ts";
import type { Signal } from "../../src/watchdog/checks/signal.ts";
import { Watchdog } from "../../src/watchdog/watchdog.ts";
import { watchdogConfigSchema } from "../../src/core/config/sections/watchdogConfig.ts";

interface Received {
  headers: Headers;
  body: Record<string, unknown>;
  raw: string;
}

const servers: Server<undefined>[] = [];
const dbs: Database[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.stop(true);
  for (const db of dbs.splice(0)) db.close();
  removeTempDirs();
});

// Secrets agentd holds: none may leave in a webhook body.
const HELD_SECRET = "Zq9vXw7Lp3TyQmR";
const MODEL_KEY = "mdl-4f8e2a91c7b3d605";
const WEBHOOK_TOKEN = "whk-e81f55a0c2d94b7a";

/** A loopback webhook receiver answering each POST with the next status of `statuses` (the last one repeats). */
function startReceiver(statuses: number[]) {
  const received: Received[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const raw = await request.text();
      received.push({ headers: request.headers, body: JSON.parse(raw) as Record<string, unknown>, raw });
      const status = statuses[Math.min(received.length - 1, statuses.length - 1)]!;
      return new Response(status < 300 ? "ok" : "nope", { status });
    },
  });
  servers.push(server);
  return { url: `http://127.0.0.1:${server.port}/hook`, received };
}

function startWatchdog(webhook: Record<string, unknown>, path = ":memory:") {
  const logLines: Array<Record<string, unknown>> = [];
  setLogSink((line) => logLines.push(JSON.parse(line) as Record<string, unknown>));
  const db = openStore({ path, migrations: allMigrations });
  dbs.push(db);
  const clock = { now: Date.UTC(2030, 0, 15, 12) };
  const config = watchdogConfigSchema().parse({
    webhook,
    resolve_after_s: 5,
    rules: [{ id: "alert-export", when: { signal: "export.failed" }, do: "alert", cooldown_s: [0] }],
    tier3: { api_key: MODEL_KEY },
  });
  const watchdog = new Watchdog({
    config,
    db,
    log: createLogger("watchdog"),
    worker: { restartWorker: async () => "restarted" },
    proxy: new HttpProxyAdmin(() => undefined, undefined),
    health: () => ({ ok: true, detail: {} }),
    secrets: [HELD_SECRET],
    now: () => clock.now,
  });
  const signal = (): Signal => ({
    id: "export.failed",
    title: "Nightly export failed",
    category: "daemon",
    severity: "error",
    component: "exporter",
    ts: clock.now,
    fields: {},
    line: `export rejected: credential ${HELD_SECRET} refused, model key ${MODEL_KEY}`,
  });
  return { watchdog, db, clock, logLines, signal, failures: () => logLines.filter((l) => l.event === "watchdog.webhook_failed") };
}

describe("alert webhook", () => {
  test("an alert POSTs the incident's title as JSON, with the configured headers and no secrets", async () => {
    const receiver = startReceiver([200]);
    const wd = startWatchdog({ url: receiver.url, headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` }, retries: 3 });
    await wd.watchdog.report(wd.signal());

    expect(receiver.received).toHaveLength(1);
    const [post] = receiver.received;
    expect(post!.headers.get("content-type")).toBe("application/json");
    expect(post!.headers.get("authorization")).toBe(`Bearer ${WEBHOOK_TOKEN}`);
    const [incident] = wd.watchdog.store.list();
    expect(incident).toBeDefined();
    expect(post!.body).toMatchObject({
      kind: "alert",
      incident_id: incident!.id,
      title: "Nightly export failed — exporter",
      severity: "error",
      at: new Date(wd.clock.now).toISOString(),
    });
    expect(String(post!.body.message)).toStartWith("rule alert-export: Nightly export failed — export rejected: credential [redacted]");
    for (const secret of [HELD_SECRET, MODEL_KEY, WEBHOOK_TOKEN]) expect(post!.raw).not.toContain(secret);
    expect(wd.failures()).toEqual([]);
    expect(wd.logLines.filter((l) => l.event === "watchdog.alert")).toHaveLength(1);
  }, 30_000);

  test("a receiver that fails twice then succeeds gets exactly 3 attempts", async () => {
    const receiver = startReceiver([503, 500, 200]);
    const wd = startWatchdog({ url: receiver.url, retries: 3 });
    await wd.watchdog.report(wd.signal());

    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.raw)).size).toBe(1);
    expect(receiver.received[0]!.body.title).toBe("Nightly export failed — exporter");
    expect(wd.failures().map((l) => [l.attempt, l.status])).toEqual([
      [1, 503],
      [2, 500],
    ]);
  }, 30_000);

  test("a webhook that stays down is retried `retries` times, logged and never fatal", async () => {
    const receiver = startReceiver([502]);
    const wd = startWatchdog({ url: receiver.url, retries: 1 });
    await wd.watchdog.report(wd.signal());

    expect(receiver.received).toHaveLength(2);
    expect(wd.failures().map((l) => l.attempt)).toEqual([1, 2]);
    // The alert is still kept on the incident for the page.
    const incident = wd.watchdog.store.get(1);
    expect(incident.action).toBe("alert");
    expect((incident.details.alerts as Array<{ kind: string }>).map((a) => a.kind)).toEqual(["alert"]);
  }, 30_000);

  test("an alerted incident that resolves sends a `resolved` POST", async () => {
    const receiver = startReceiver([200]);
    const wd = startWatchdog({ url: receiver.url, retries: 0 });
    await wd.watchdog.report(wd.signal());
    wd.clock.now += 6_000;
    await wd.watchdog.tick();

    expect(receiver.received.map((r) => r.body.kind)).toEqual(["alert", "resolved"]);
    expect(receiver.received[1]!.body).toMatchObject({
      title: "Nightly export failed — exporter",
      message: "resolved: Nightly export failed — exporter",
    });
    expect(wd.watchdog.store.get(1).state).toBe("resolved");
  }, 30_000);

  test("another reader of the store never sees the incident resolved without its resolved alert", async () => {
    const path = join(makeTempDir("agentd-webhook-"), "agentd.db");
    const wd = startWatchdog({ url: startReceiver([200]).url, retries: 0 }, path);
    // The worker's view: its own connection to the same file, as /api/incidents reads it.
    const worker = openStore({ path, migrations: allMigrations });
    dbs.push(worker);
    await wd.watchdog.report(wd.signal());
    const seen: string[] = [];
    const alert = wd.watchdog.alerts.alert.bind(wd.watchdog.alerts);
    wd.watchdog.alerts.alert = (input) => {
      if (input.kind === "resolved")
        seen.push(worker.query<{ state: string }, []>("SELECT state FROM incidents WHERE id = 1").get()!.state);
      return alert(input);
    };
    wd.clock.now += 6_000;
    await wd.watchdog.tick();
    // While the resolved alert is being recorded, the resolution is not yet visible: both land together.
    expect(seen).toEqual(["open"]);
    const incident = worker.query<{ state: string; details: string }, []>("SELECT state, details FROM incidents WHERE id = 1").get()!;
    expect({ state: incident.state, alerts: (JSON.parse(incident.details).alerts as Array<{ kind: string }>).map((a) => a.kind) }).toEqual({
      state: "resolved",
      alerts: ["alert", "resolved"],
    });
  }, 30_000);
});
