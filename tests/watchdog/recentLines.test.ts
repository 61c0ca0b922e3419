import { expect, test } from "bun:test";
import { RecentLines } from "../../src/watchdog/recentLines.ts";
import { seededRandom } from "../support/seededRandom.ts";

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

test("blocks of whole lines keep the same last lines as the lines pushed one by one", () => {
  const next = seededRandom(23);
  for (const capacity of [1, 3, 200]) {
    const recent = new RecentLines(capacity);
    const all: string[] = [];
    for (let round = 0; round < 400; round++) {
      if (next() < 0.3) {
        const line = `single ${round}`;
        recent.push(line);
        all.push(line);
      } else {
        // 1 to 500 lines, some ended by CRLF, some empty; the CR is not part of the line kept.
        const count = 1 + Math.floor(next() ** 3 * 500);
        let block = "";
        for (let i = 0; i < count; i++) {
          const line = next() < 0.05 ? "" : `{"event":"proxy.request","n":${round}.${i}}`;
          all.push(line);
          block += next() < 0.1 ? `${line}\r\n` : `${line}\n`;
        }
        recent.pushBlock(block);
      }
      expect(recent.list()).toEqual(all.slice(-capacity));
    }
  }
});

test("a block's last line without its LF is a line of its own; an empty block adds nothing", () => {
  const recent = new RecentLines(5);
  recent.pushBlock("");
  expect(recent.list()).toEqual([]);
  recent.pushBlock("a\nb");
  recent.pushBlock("\n");
  expect(recent.list()).toEqual(["a", "b", ""]);
});
