import { expect, test } from "bun:test";
import { mapEntry, newMap } from "../../src/core/collections/index.ts";

test("mapEntry makes a value once per key and returns the kept one after", () => {
  const outer = new Map<string, Map<number, string>>();
  let made = 0;
  const make = () => {
    made++;
    return newMap<number, string>();
  };
  const first = mapEntry(outer, "a", make);
  first.set(1, "one");
  expect(mapEntry(outer, "a", make)).toBe(first);
  expect(mapEntry(outer, "b", make)).not.toBe(first);
  expect(made).toBe(2);
  expect(mapEntry(outer, "a", make).get(1)).toBe("one");
});
