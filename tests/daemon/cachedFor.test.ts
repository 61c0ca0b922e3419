import { describe, expect, test } from "bun:test";
import { cachedFor } from "../../src/core/health/index.ts";

describe("cachedFor", () => {
  test("runs the check once per period, then again after it", () => {
    let clock = 0;
    let runs = 0;
    const check = cachedFor(
      1000,
      () => ++runs,
      () => clock,
    );
    expect([check(), check(), check()]).toEqual([1, 1, 1]);
    clock = 999;
    expect(check()).toBe(1);
    clock = 1000;
    expect(check()).toBe(2);
  });

  test("invalidate() makes the next call check again, within the period", () => {
    let runs = 0;
    const check = cachedFor(
      1000,
      () => ++runs,
      () => 0,
    );
    expect(check()).toBe(1);
    check.invalidate();
    expect([check(), check()]).toEqual([2, 2]);
  });
});
