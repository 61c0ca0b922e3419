import { describe, expect, test } from "bun:test";
import { LineBatcher } from "../../src/core/log/lineBatcher.ts";

// The worker's log lines on their way to the supervisor's pipe: batched writes, every line, in order.
function harness(intervalMs = 10) {
  let clock = 0;
  const writes: string[] = [];
  const soon: Array<() => void> = [];
  const later: Array<{ at: number; fn: () => void }> = [];
  const batcher = new LineBatcher({
    write: (bytes) => writes.push(Buffer.from(bytes).toString()),
    intervalMs,
    now: () => clock,
    soon: (fn) => soon.push(fn),
    later: (fn, ms) => later.push({ at: clock + ms, fn }),
  });
  /** Runs the next-turn callbacks, then every timer due by `to`, in time order. */
  const advance = (to = clock) => {
    for (const fn of soon.splice(0)) fn();
    for (;;) {
      later.sort((a, b) => a.at - b.at);
      const due = later[0];
      if (!due || due.at > to) break;
      later.shift();
      clock = due.at;
      due.fn();
      for (const fn of soon.splice(0)) fn();
    }
    clock = to;
  };
  return { batcher, writes, advance, soon, later, setClock: (t: number) => (clock = t) };
}

describe("LineBatcher", () => {
  test("the first line after a quiet spell goes out on the next turn, with the lines of that turn", () => {
    const h = harness();
    h.batcher.add("a");
    h.batcher.add("b");
    expect(h.writes).toEqual([]);
    h.advance();
    expect(h.writes).toEqual(["a\nb\n"]);
  });

  test("lines within the interval after a write wait for it, then go out in one write", () => {
    const h = harness(10);
    h.batcher.add("a");
    h.advance(1);
    h.batcher.add("b");
    h.advance(3);
    h.batcher.add("c");
    h.advance(9);
    expect(h.writes).toEqual(["a\n"]);
    h.advance(11);
    expect(h.writes).toEqual(["a\n", "b\nc\n"]);
    // Quiet for longer than the interval: the next line goes at once again.
    h.advance(40);
    h.batcher.add("d");
    h.advance(40);
    expect(h.writes).toEqual(["a\n", "b\nc\n", "d\n"]);
  });

  test("a warning or an error is not held back: it goes on the next turn with the lines before it", () => {
    const h = harness(10);
    h.batcher.add("a");
    h.advance(0);
    h.batcher.add("b");
    h.batcher.add("boom", true);
    h.advance(1);
    expect(h.writes).toEqual(["a\n", "b\nboom\n"]);
    // The timer set for "b" finds nothing left; the order of every line is kept.
    h.batcher.add("c");
    h.advance(30);
    expect(h.writes.join("")).toBe("a\nb\nboom\nc\n");
  });

  test("flush writes what is held at once, and nothing when nothing is", () => {
    const h = harness(10);
    h.batcher.add("a");
    h.advance(0);
    h.batcher.add("b");
    h.batcher.flush();
    expect(h.writes).toEqual(["a\n", "b\n"]);
    h.batcher.flush();
    h.advance(50);
    expect(h.writes).toEqual(["a\n", "b\n"]);
  });

  test("under a steady flood, writes come at most once per interval and every line arrives once, in order", () => {
    const h = harness(10);
    const sent: string[] = [];
    for (let t = 0; t < 1000; t++) {
      h.setClock(t * 0.25);
      const line = `line-${t}`;
      sent.push(line);
      h.batcher.add(line);
      h.advance(t * 0.25);
    }
    h.advance(1000);
    expect(h.writes.join("")).toBe(`${sent.join("\n")}\n`);
    expect(h.writes.length).toBeLessThanOrEqual(Math.ceil(250 / 10) + 1);
  });

  test("lines are written as UTF-8 whatever their characters and length, each write with its own batch only", () => {
    const h = harness(10);
    const long = "x".repeat(400_000);
    const batches = [["plain", "é 日本 🙂", "\u2028 and a lone \ud800 surrogate"], ["a"], [long, "after the long one"], ["b"]];
    for (const batch of batches) {
      for (const line of batch) h.batcher.add(line);
      h.batcher.flush();
    }
    expect(h.writes).toEqual(batches.map((batch) => `${batch.map((line) => line.replace("\ud800", "\ufffd")).join("\n")}\n`));
  });
});
