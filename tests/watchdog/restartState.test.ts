import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { workerCrashSignal } from "../../src/daemon/crashLoopIncident.ts";
import { createLogger } from "../../src/core/log/index.ts";
import { openStore, type Database } from "../../src/core/store/index.ts";
import { HttpProxyAdmin } from "../../src/watchdog/actions/proxyAdmin.ts";
import { CheckScheduler } from "../../src/watchdog/checks/checkScheduler.ts";
import type { Signal } from "../../src/watchdog/checks/signal.ts";
import { IncidentStore } from "../../src/watchdog/incidents/incidentStore.ts";
import { Watchdog } from "../../src/watchdog/watchdog.ts";
import { watchdogConfigSchema } from "../../src/core/config/sections/watchdogConfig.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { createHarness, type Harness } from "./watchdogHarness.ts";

// What a supervisor knows is in the store, so the next one (same data dir) carries on from it.

const dbs: Database[] = [];
let harness: Harness | undefined;
afterEach(() => {
  harness?.close();
  harness = undefined;
  for (const db of dbs.splice(0)) db.close();
});
afterAll(removeTempDirs);

const noWorker = { workerPid: () => undefined };

function storeFile(): string {
  return join(makeTempDir("agentd-wd-state-"), "agentd.db");
}

function openDb(path: string): Database {
  const db = openStore({ path, migrations: allMigrations });
  dbs.push(db);
  return db;
}

describe("check state across supervisors", () => {
  const config = (argv: string[]) =>
    watchdogConfigSchema().parse({ checks: [{ type: "command", name: "db", argv, failure_threshold: 2, success_threshold: 1 }] });

  test("a failing check is known to fail at once and its next failure is no new signal; a changed check starts fresh", async () => {
    const path = storeFile();
    const failing = config(["false"]);
    const signals: Signal[] = [];
    let now = 1_000_000;
    const first = new CheckScheduler(
      failing.checks,
      failing.flapping,
      noWorker,
      (s) => signals.push(s),
      openDb(path),
      () => now,
    );
    await first.runOnce("db");
    now += 1000;
    await first.runOnce("db");
    expect(signals.map((s) => s.id)).toEqual(["check.command"]);
    const failingSince = now;

    const second = new CheckScheduler(
      failing.checks,
      failing.flapping,
      noWorker,
      (s) => signals.push(s),
      openDb(path),
      () => now,
    );
    expect(second.failing("db")).toBe(true);
    expect(second.rows()[0]).toMatchObject({
      state: "fail",
      last_change: failingSince,
      failing_since: failingSince,
      output: "exit 1, expected 0",
    });
    now += 1000;
    await second.runOnce("db");
    expect(signals).toHaveLength(1);
    expect(second.rows()[0]!.failing_since).toBe(failingSince);

    // Another command under the same name is another check: nothing is carried over.
    const changed = config(["sh", "-c", "exit 3"]);
    const third = new CheckScheduler(
      changed.checks,
      changed.flapping,
      noWorker,
      (s) => signals.push(s),
      openDb(path),
      () => now,
    );
    expect(third.failing("db")).toBe(false);
    expect(third.rows()[0]!.state).toBe("unknown");
  });
});

describe("incident working state across supervisors", () => {
  test("a restart under verification is judged by the next supervisor, not decided again", async () => {
    harness = createHarness({ verify_window_s: 30, resolve_after_s: 60 });
    await harness.watchdog.report(workerCrashSignal({ pid: 4242, code: 137, signal: "SIGKILL", uptime_ms: 5000 }));
    expect(harness.restarts).toHaveLength(1);
    const [incident] = new IncidentStore(harness.db).list();
    expect(incident).toMatchObject({ action: "restart_worker", verdict: "pending" });

    const restarts: string[] = [];
    const next = new Watchdog({
      config: harness.config,
      db: harness.db,
      log: createLogger("watchdog"),
      worker: {
        restartWorker: async (reason) => {
          restarts.push(reason);
          return "restarted";
        },
      },
      proxy: new HttpProxyAdmin(() => undefined, undefined),
      health: () => ({ ok: true, detail: {} }),
      now: () => harness!.clock.now,
    });
    expect(next.adoptUnresolved()).toBe(1);
    const adopted = next.tracked("worker")!;
    expect(adopted.verification).toMatchObject({ action: "restart_worker", tier: 1 });
    expect(adopted.tried).toEqual(["restart_worker"]);
    expect([...adopted.signals.keys()]).toEqual(["worker.crashed"]);

    harness.clock.now += 30_000;
    await next.tick();
    const store = new IncidentStore(harness.db);
    expect(store.get(incident!.id).verdict).toBe("success");
    harness.clock.now += 60_000;
    await next.tick();
    expect(store.get(incident!.id).state).toBe("resolved");
    expect(restarts).toEqual([]);
    expect(harness.db.query("SELECT count(*) AS n FROM watchdog_incident_state").get()).toEqual({ n: 0 });
  });
});
