import { describe, expect, test } from "bun:test";
import { failsOnItsOwn } from "../../src/watchdog/checks/workerProbe.ts";

const healthWith = (checks: Record<string, string>) =>
  JSON.stringify({ status: "fail", checks: Object.fromEntries(Object.entries(checks).map(([key, status]) => [key, [{ status }]])) });

describe("which failing /health answers blame the worker", () => {
  test("only upstream checks failing: a restart would not help", () => {
    expect(failsOnItsOwn(healthWith({ "proxy:providers": "fail", "store:writable": "pass" }))).toBe(false);
  });
  test("a check of the worker itself failing does", () => {
    expect(failsOnItsOwn(healthWith({ "proxy:providers": "fail", "store:writable": "fail" }))).toBe(true);
  });
  test("a body that is not a health document counts against the worker", () => {
    expect(failsOnItsOwn("<html>bad gateway</html>")).toBe(true);
  });
});
