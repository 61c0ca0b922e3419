import { expect, test } from "bun:test";
import { RecentLines } from "../../src/watchdog/recentLines.ts";

test("keeps the last lines, oldest first, across many wraps", () => {
  const recent = new RecentLines(3);
  expect(recent.list()).toEqual([]);
  recent.push("a");
  recent.push("b");
  expect(recent.list()).toEqual(["a", "b"]);
  for (let i = 0; i < 10; i++) recent.push(`l${i}`);
  expect(recent.list()).toEqual(["l7", "l8", "l9"]);
  const copy = recent.list();
  copy.push("x");
  expect(recent.list()).toEqual(["l7", "l8", "l9"]);
});
