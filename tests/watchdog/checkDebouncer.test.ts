import { describe, expect, test } from "bun:test";
import { CheckDebouncer } from "../../src/watchdog/checks/checkDebouncer.ts";

describe("check debouncing", () => {
  test("one blip is not a failure; three in a row are; two successes clear it", () => {
    const d = new CheckDebouncer({ failureThreshold: 3, successThreshold: 2, flapChanges: 4, flapWindowMs: 600_000 });
    expect(d.observe(true, 0)).toMatchObject({ state: "ok", changed: false });
    expect(d.observe(false, 1).state).toBe("ok");
    expect(d.observe(true, 2).state).toBe("ok");
    d.observe(false, 3);
    d.observe(false, 4);
    expect(d.observe(false, 5)).toMatchObject({ state: "failing", changed: true });
    expect(d.observe(true, 6)).toMatchObject({ state: "failing", changed: false });
    expect(d.observe(true, 7)).toMatchObject({ state: "ok", changed: true });
  });

  test("a check that keeps changing state is flapping, reported once", () => {
    const d = new CheckDebouncer({ failureThreshold: 1, successThreshold: 1, flapChanges: 4, flapWindowMs: 600_000 });
    d.observe(true, 0);
    const results = [false, true, false, true, false].map((ok, i) => d.observe(ok, i + 1));
    expect(results.map((r) => r.startedFlapping)).toEqual([false, false, false, true, false]);
    expect(results.at(-1)!.flapping).toBe(true);
  });
});
