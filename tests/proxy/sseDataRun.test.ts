import { describe, expect, test } from "bun:test";
import { afterLineFeeds, lineFeeds, relayableRun, splitFirstEvent } from "../../src/proxy/upstream/sseDataRun.ts";
import { SseDecoder } from "../../src/proxy/upstream/sseDecoder.ts";

const all = () => true;
const encode = (text: string) => new TextEncoder().encode(text);

describe("relayableRun", () => {
  test("a run of plain data events, up to the first that is not one", () => {
    const text = 'data: {"a":1}\n\ndata: {"b":2}\n\nevent: x\ndata: {}\n\n';
    expect(relayableRun(text, all)).toEqual({ end: 30, events: 2 });
    expect(text.slice(0, 30)).toBe('data: {"a":1}\n\ndata: {"b":2}\n\n');
  });

  test("it ends at an event the relay refuses, and before an event still missing its blank line", () => {
    expect(relayableRun('data: {"a":1}\n\ndata: {"usage":1}\n\n', (d) => !d.includes("usage"))).toEqual({ end: 15, events: 1 });
    expect(relayableRun('data: {"a":1}\n\ndata: {"b":2}\n', all)).toEqual({ end: 15, events: 1 });
    expect(relayableRun('data: {"a":1}\n\ndata: {"b"', all)).toEqual({ end: 15, events: 1 });
  });

  test("nothing else is plain: CR line ends, a second data line, no space after the colon, a comment, an id", () => {
    for (const text of [
      'data: {"a":1}\r\n\r\n',
      'data: {"a":1}\r\n\n',
      'data: {"a"\r:1}\n\n',
      'data: {"a":1}\ndata: {"b":2}\n\n',
      'data:{"a":1}\n\n',
      ": keep-alive\n\n",
      'id: 7\ndata: {"a":1}\n\n',
      "\n\n",
      "",
    ])
      expect(relayableRun(text, all).events).toBe(0);
  });
});

describe("relayableRun from a point", () => {
  test("starts where it is asked to", () => {
    const text = ': hi\n\ndata: {"a":1}\n\n';
    expect(relayableRun(text, all)).toEqual({ end: 0, events: 0 });
    expect(relayableRun(text, all, 6)).toEqual({ end: text.length, events: 1 });
  });
});

describe("afterLineFeeds and lineFeeds", () => {
  test("find the same spot in the bytes as in the text, whatever the text decoded to", () => {
    const text = 'data: {"é":"✓"}\n\ndata: {"x":1}\n\n';
    const bytes = encode(text);
    expect(afterLineFeeds(bytes, 0, 2)).toBe(encode('data: {"é":"✓"}\n\n').length);
    expect(afterLineFeeds(bytes, 0, 4)).toBe(bytes.length);
    expect(lineFeeds(text, 0, 17)).toBe(2);
    expect(lineFeeds(text, 17, text.length)).toBe(2);
    // A malformed byte decodes to one U+FFFD of three bytes; the spot is still the read's own.
    const malformed = new Uint8Array([...encode("data: {"), 0xff, ...encode("}\n\ndata: {}\n\n")]);
    expect(afterLineFeeds(malformed, 0, 2)).toBe(11);
    expect(afterLineFeeds(malformed, 11, 2)).toBe(malformed.length);
  });

  test("splitFirstEvent takes a run's first event's data and leaves the rest", () => {
    const { data, rest } = splitFirstEvent(encode('data: {"é":1}\n\ndata: {}\n\n'));
    expect(data).toBe('{"é":1}');
    expect(new TextDecoder().decode(rest)).toBe("data: {}\n\n");
  });
});

/** What a relay sends for an event, framed again (the path every event took before runs). */
const framed = (data: string) => `data: ${data}\n\n`;

/**
 * Deterministic pseudo-random numbers (xorshift32), so a failure replays. Multiplication-free: the
 * state stays a 32-bit integer and never cycles early.
 */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
}

const PIECES = [
  'data: {"choices":[{"delta":{"content":"a"},"finish_reason":null}]}\n\n',
  'data: {"choices":[{"delta":{"content":"é✓"},"finish_reason":null}]}\n\n',
  'data: {"choices":[],"usage":{"prompt_tokens":1}}\n\n',
  'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\n',
  ": keep-alive\n\n",
  'data: {"a":1}\r\n\r\n',
  'event: x\ndata: {"b":2}\n\n',
  'data:{"c":3}\n\n',
  'data: {"d":1}\ndata: {"d":2}\n\n',
  'id: 9\ndata: {"e":5}\n\n',
  "data: [DONE]\n\n",
  "\uFEFFdata: {}\n\n",
  "é: unknown field\n\n",
];

describe("SseDecoder.pushRelaying", () => {
  test("sends, read by read, exactly what framing each event again would send (5,000 random streams and splits)", () => {
    const next = random(20261127);
    const relayable = (data: string) => !data.includes("usage") && !data.includes('"stop"') && data.startsWith("{");
    let runs = 0;
    for (let round = 0; round < 5000; round++) {
      const count = 1 + Math.floor(next() * 12);
      let text = "";
      for (let i = 0; i < count; i++) text += PIECES[Math.floor(next() * PIECES.length)];
      const bytes = encode(text);
      // Reads cut anywhere, inside a character too.
      const reads: Uint8Array[] = [];
      for (let at = 0; at < bytes.length; ) {
        const size = 1 + Math.floor(next() * 400);
        reads.push(bytes.subarray(at, at + size));
        at += size;
      }
      const slow = new SseDecoder();
      const fast = new SseDecoder();
      let expected = "";
      let got = "";
      const decoder = new TextDecoder();
      for (const read of reads) {
        for (const event of slow.push(read)) expected += relayable(event.data) ? framed(event.data) : `<${event.data}>`;
        for (const item of fast.pushRelaying(read, relayable)) {
          if (item instanceof Uint8Array) {
            runs++;
            got += decoder.decode(item, { stream: true });
          } else got += relayable(item.data) ? framed(item.data) : `<${item.data}>`;
        }
      }
      for (const event of slow.end()) expected += relayable(event.data) ? framed(event.data) : `<${event.data}>`;
      got += decoder.decode();
      for (const event of fast.end()) got += relayable(event.data) ? framed(event.data) : `<${event.data}>`;
      if (got !== expected) throw new Error(`round ${round}: ${JSON.stringify(reads.map((r) => new TextDecoder().decode(r)))}`);
    }
    // The fast path was taken, often: the comparison is not between two slow paths.
    expect(runs).toBeGreaterThan(2000);
  });

  test("a read that is all plain events comes back as itself; the first read's first event is parsed", () => {
    const decoder = new SseDecoder();
    const first = encode('data: {"a":1}\n\ndata: {"b":2}\n\n');
    const items = decoder.pushRelaying(first, all);
    expect(items[0]).toEqual({ data: '{"a":1}', event: undefined, id: undefined });
    expect(new TextDecoder().decode(items[1] as Uint8Array)).toBe('data: {"b":2}\n\n');
    expect(items).toHaveLength(2);
    const read = encode('data: {"b":2}\n\ndata: {"c":3}\n\n');
    expect(decoder.pushRelaying(read, all)).toEqual([read]);
    expect(decoder.pushRelaying(read, all)[0]).toBe(read);
  });

  test("events between runs keep their place", () => {
    const decoder = new SseDecoder();
    decoder.pushRelaying(encode("data: {}\n\n"), all);
    const items = decoder.pushRelaying(encode('data: {"a":1}\n\n: note\n\ndata: [DONE]\n\ndata: {"b":2}\n\n'), (d) => d.startsWith("{"));
    const shown = items.map((item) => (item instanceof Uint8Array ? `run ${new TextDecoder().decode(item)}` : `event ${item.data}`));
    expect(shown).toEqual(['run data: {"a":1}\n\n', "event [DONE]", 'run data: {"b":2}\n\n']);
  });

  test("after a read that ended inside an event or a character, the next read's first event is parsed", () => {
    const decoder = new SseDecoder();
    decoder.pushRelaying(encode("data: {}\n\n"), all);
    const split = encode('data: {"é":1}\n\ndata: {}\n\n');
    expect(decoder.pushRelaying(split.subarray(0, 9), all)).toEqual([]);
    const items = decoder.pushRelaying(split.subarray(9), all);
    expect(items[0]).toEqual({ data: '{"é":1}', event: undefined, id: undefined });
    expect(new TextDecoder().decode(items[1] as Uint8Array)).toBe("data: {}\n\n");
  });

  test("a data line held from the last read joins the next read's first event, which is not relayed", () => {
    const decoder = new SseDecoder();
    decoder.pushRelaying(encode("data: {}\n\n"), all);
    expect(decoder.pushRelaying(encode('data: {"a":1}\n'), all)).toEqual([]);
    expect(decoder.pushRelaying(encode('data: {"b":2}\n\n'), all)).toEqual([{ data: '{"a":1}\n{"b":2}', event: undefined, id: undefined }]);
  });

  test("a read that ends in the first bytes of a character gives back its run without them", () => {
    const decoder = new SseDecoder();
    decoder.pushRelaying(encode("data: {}\n\n"), all);
    const next = encode('data: {"b":1}\n\né: x\n\ndata: {}\n\n');
    const [run, ...others] = decoder.pushRelaying(next.subarray(0, 16), all);
    expect(new TextDecoder().decode(run as Uint8Array)).toBe('data: {"b":1}\n\n');
    expect(others).toEqual([]);
    // The character's first byte stays with the decoder: the next read parses it with the rest, never relays it twice.
    const after = decoder.pushRelaying(next.subarray(16), all);
    expect(after.map((item) => (item instanceof Uint8Array ? new TextDecoder().decode(item) : item))).toEqual(["data: {}\n\n"]);
  });
});
