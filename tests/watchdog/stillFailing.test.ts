import { afterEach, describe, expect, test } from "bun:test";
import { CheckScheduler } from "../../src/watchdog/checks/checkScheduler.ts";
import type { Signal } from "../../src/watchdog/checks/signal.ts";
import { IncidentStore } from "../../src/watchdog/incidents/incidentStore.ts";
import { createHarness, type Harness } from "./watchdogHarness.ts";
import { REFUSED_PORT } from "../support/refusedPort.ts";

// A check that keeps failing keeps its incident's facts current (count, last seen, latest output)
// without deciding it again: the alert its rule chose is sent once, however many runs fail.

let harness: Harness | undefined;
afterEach(() => {
  harness?.close();
  harness = undefined;
});

const noWorker = { workerPid: () => undefined };

function closedPortCheck(port: number) {
  return {
    // A rule without cooldowns would act again at every signal it saw: the proof nothing is re-decided.
    rules: [{ id: "alert-on-db", when: { signal: "check.tcp" }, do: "alert", cooldown_s: [0, 0, 0, 0, 0, 0] }],
    checks: [{ type: "tcp", name: "db", port, timeout_ms: 2000, failure_threshold: 1, success_threshold: 1, severity: "critical" }],
  };
}

describe("a check that still fails", () => {
  test("counts on its one incident, moves last seen and the output, and acts once", async () => {
    const port = REFUSED_PORT;
    const h = createHarness(closedPortCheck(port));
    harness = h;
    const newSignals: Signal[] = [];
    const scheduler = new CheckScheduler(
      h.config.checks,
      h.config.flapping,
      noWorker,
      (signal) => {
        newSignals.push(signal);
        void h.watchdog.report(signal);
      },
      h.db,
      () => h.clock.now,
      (signal) => void h.watchdog.recur(signal),
    );
    const store = new IncidentStore(h.db);
    const opened = h.clock.now;
    await scheduler.runOnce("db");
    await h.watchdog.idle();
    const [incident] = store.list();
    expect(incident).toMatchObject({ count: 1, first_seen: opened, last_seen: opened, action: "alert" });
    expect(incident!.details.output).toContain(`127.0.0.1:${port}`);
    expect(incident!.details.output).toContain("ECONNREFUSED");

    for (let run = 1; run <= 3; run++) {
      h.clock.now += 1000;
      await scheduler.runOnce("db");
      await h.watchdog.idle();
    }
    const after = store.list({ limit: 10 });
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ id: incident!.id, state: "open", count: 4, first_seen: opened, last_seen: h.clock.now });
    expect(after[0]!.details).toMatchObject({ output_at: h.clock.now });
    expect(after[0]!.details.output).toContain("ECONNREFUSED");
    expect(newSignals).toHaveLength(1);
    expect(h.events("watchdog.action").map((e) => e.incident_id)).toEqual([incident!.id]);
    // One signal line in the timeline, not one per run.
    expect(store.timeline(incident!.id).filter((e) => e.kind === "signal")).toHaveLength(1);
  });

  test("whose incident was closed meanwhile opens a new one and decides it", async () => {
    const h = createHarness(closedPortCheck(REFUSED_PORT));
    harness = h;
    const scheduler = new CheckScheduler(
      h.config.checks,
      h.config.flapping,
      noWorker,
      (signal) => void h.watchdog.report(signal),
      h.db,
      () => h.clock.now,
      (signal) => void h.watchdog.recur(signal),
    );
    const store = new IncidentStore(h.db);
    await scheduler.runOnce("db");
    await h.watchdog.idle();
    const [first] = store.list();
    store.closeEpisode(first!.id);
    h.clock.now += 1000;
    await scheduler.runOnce("db");
    await h.watchdog.idle();
    const incidents = store.list({ state: "unresolved" });
    expect(incidents).toHaveLength(1);
    expect(incidents[0]!.id).toBeGreaterThan(first!.id);
    expect(incidents[0]).toMatchObject({ count: 1, first_seen: h.clock.now, action: "alert" });
    expect(store.get(first!.id)).toMatchObject({ state: "resolved", count: 1 });
    expect(h.events("watchdog.action").map((e) => e.incident_id)).toEqual([first!.id, incidents[0]!.id]);
  });
});
