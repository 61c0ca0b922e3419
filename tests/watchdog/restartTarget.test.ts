import { afterEach, describe, expect, test } from "bun:test";
import { workerCrashSignal } from "../../src/daemon/crashLoopIncident.ts";
import { createHarness, type Harness } from "./watchdogHarness.ts";

let harness: Harness | undefined;
afterEach(() => {
  harness?.close();
  harness = undefined;
});

describe("restart_worker", () => {
  test("is aimed at the worker the signal was about, so a late decision spares its successor", async () => {
    harness = createHarness({});
    await harness.watchdog.report(workerCrashSignal({ pid: 4242, code: 137, signal: "SIGKILL", uptime_ms: 5000 }));
    await harness.watchdog.idle();
    expect(harness.restartTargets).toEqual([4242]);
  });
});
