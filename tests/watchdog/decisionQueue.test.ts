import { afterEach, describe, expect, test } from "bun:test";
import { createLogger, setLogSink } from "../../src/core/log/index.ts";
import { DecisionQueue } from "../../src/watchdog/decisionQueue.ts";
import { IncidentStore } from "../../src/watchdog/incidents/incidentStore.ts";
import type { Signal } from "../../src/watchdog/checks/signal.ts";
import { createHarness, type Harness } from "./watchdogHarness.ts";

let harness: Harness | undefined;
afterEach(() => {
  harness?.close();
  harness = undefined;
});

function captureLog() {
  const lines: Array<Record<string, unknown>> = [];
  setLogSink((line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  return lines;
}

describe("the watchdog's decision queue", () => {
  test("beyond its bound it drops, counts and logs; what it kept is decided in order", async () => {
    const lines = captureLog();
    const queue = new DecisionQueue({ max: 1000, log: createLogger("watchdog") });
    const decided: number[] = [];
    const pushed = Array.from({ length: 1500 }, (_, i) => queue.push(`signal ${i}`, () => void decided.push(i)));
    expect(queue.depth).toBe(1000);
    expect(queue.dropped).toBe(500);
    // A follow-up of an action under way is never dropped, full queue or not.
    const followUp = queue.push("outcome", () => void decided.push(-1), { bounded: false });
    expect(queue.depth).toBe(1001);
    await Promise.all([...pushed, followUp]);
    expect(decided).toEqual([...Array.from({ length: 1000 }, (_, i) => i), -1]);
    expect(queue.depth).toBe(0);
    const dropped = lines.filter((l) => l.event === "watchdog.queue_dropped");
    // One line as dropping starts, one with the tally once the queue has emptied.
    expect(dropped).toEqual([
      expect.objectContaining({ dropped: 1, dropped_total: 1, queue_max: 1000, first: "signal 1000" }),
      expect.objectContaining({ dropped: 499, dropped_total: 500, queue_max: 1000 }),
    ]);
    // Room again: nothing more is dropped.
    await queue.push("later", () => undefined);
    expect(queue.dropped).toBe(500);
  });

  test("a decision that throws is logged and the queue goes on", async () => {
    const lines = captureLog();
    const queue = new DecisionQueue({ max: 10, log: createLogger("watchdog") });
    const decided: string[] = [];
    await Promise.all([
      queue.push("bad", () => {
        throw new Error("boom");
      }),
      queue.push("good", () => void decided.push("good")),
    ]);
    expect(decided).toEqual(["good"]);
    expect(lines.find((l) => l.event === "watchdog.error")).toMatchObject({ work: "bad" });
  });

  test("the watchdog counts the signals its full queue dropped", async () => {
    harness = createHarness({}, undefined, { queueMax: 10 });
    const signal = (i: number): Signal => ({
      id: "app.weird",
      title: "Weird",
      category: "daemon",
      severity: "warning",
      component: `app:${i}`,
      ts: harness!.clock.now,
      fields: {},
      line: `{"event":"app.weird","n":${i}}`,
    });
    const handled = Array.from({ length: 25 }, (_, i) => harness!.watchdog.report(signal(i)));
    expect(harness.watchdog.counters()).toMatchObject({ signals_total: 25, queue_dropped_total: 15, queue_depth: 10 });
    await Promise.all(handled);
    expect(new IncidentStore(harness.db).count()).toBe(10);
    expect(harness.watchdog.counters()).toMatchObject({ queue_dropped_total: 15, queue_depth: 0 });
    expect(harness.events("watchdog.queue_dropped")[0]).toMatchObject({ dropped: 1, queue_max: 10, first: "signal app.weird" });
  });

  test("a full queue of log signals never drops a worker crash or a failing check", async () => {
    harness = createHarness({}, undefined, { queueMax: 5 });
    const fromLog = (i: number): Signal => ({
      id: "app.weird",
      title: "Weird",
      category: "daemon",
      severity: "warning",
      component: `app:${i}`,
      ts: harness!.clock.now,
      fields: {},
      line: `{"event":"app.weird","n":${i}}`,
    });
    const flood = Array.from({ length: 20 }, (_, i) => harness!.watchdog.report(fromLog(i)));
    const crash = harness.watchdog.report({
      id: "worker.crashed",
      title: "Worker exited",
      category: "daemon",
      severity: "critical",
      component: "worker",
      ts: harness.clock.now,
      fields: { code: 1 },
    });
    expect(harness.watchdog.counters()).toMatchObject({ queue_dropped_total: 15 });
    await Promise.all([...flood, crash]);
    const incidents = new IncidentStore(harness.db).list({ limit: 50 });
    expect(incidents.map((incident) => incident.title)).toContain("Worker exited");
  });
});
