import { describe, expect, test } from "bun:test";
import { chatChunkNeedsParse } from "../../src/proxy/upstream/chatChunkScan.ts";

const delta = (content: string, extra = "") =>
  `{"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]${extra}}`;

describe("chatChunkNeedsParse", () => {
  test("a plain content delta is relayed as text, also with usage:null on it (include_usage)", () => {
    expect(chatChunkNeedsParse(delta("hello"))).toBe(false);
    expect(chatChunkNeedsParse(delta("hello", ',"usage":null'))).toBe(false);
    expect(chatChunkNeedsParse(delta("hello", ' , "usage" : null'))).toBe(false);
  });

  test("a chunk with a finish_reason or usage is parsed, however it is spaced", () => {
    expect(chatChunkNeedsParse(delta("", "").replace('"finish_reason":null', '"finish_reason":"stop"'))).toBe(true);
    expect(chatChunkNeedsParse(delta("", "").replace('"finish_reason":null', '"finish_reason" :\n "length"'))).toBe(true);
    expect(chatChunkNeedsParse(delta("", ',"usage":{"prompt_tokens":5,"completion_tokens":2}'))).toBe(true);
    expect(chatChunkNeedsParse(delta("", ',"usage": {}'))).toBe(true);
    // The second choice finishing counts as much as the first.
    expect(chatChunkNeedsParse(`{"choices":[{"finish_reason":null},{"finish_reason":"stop"}]}`)).toBe(true);
  });

  test("errors are parsed, so an error inside a 200 stream still fails it", () => {
    expect(chatChunkNeedsParse('{"error":{"message":"overloaded"}}')).toBe(true);
    expect(chatChunkNeedsParse('{"type":"error","message":"x"}')).toBe(true);
    expect(chatChunkNeedsParse('{"type":"response.failed","response":{}}')).toBe(true);
  });

  test("what is not one JSON object is parsed (and so reported), [DONE] included", () => {
    expect(chatChunkNeedsParse("[DONE]")).toBe(true);
    expect(chatChunkNeedsParse('{"id": "chatcmpl-broken", "choices": [')).toBe(true);
    expect(chatChunkNeedsParse("")).toBe(true);
    expect(chatChunkNeedsParse(` ${delta("x")}`)).toBe(true);
  });

  test("a key's name written inside content is escaped, and does not force a parse", () => {
    expect(chatChunkNeedsParse(delta('the "usage" and "finish_reason":"stop" words'))).toBe(false);
  });

  test("a key or value written with escapes is parsed; non-ASCII escapes in content are not", () => {
    expect(chatChunkNeedsParse(delta("", ',"\\u0075sage":{"prompt_tokens":5}'))).toBe(true);
    expect(chatChunkNeedsParse(`{"choices":[{"finish_\\u0072eason":"stop"}]}`)).toBe(true);
    expect(chatChunkNeedsParse('{"type":"\\u0065rror","message":"x"}')).toBe(true);
    expect(chatChunkNeedsParse(delta("caf\u00e9 \u4e2d").replace("\u00e9", "\\u00e9").replace("\u4e2d", "\\u4e2d"))).toBe(false);
  });

  test("a string that ends with the key's name costs a parse rather than a missed field", () => {
    expect(chatChunkNeedsParse(delta('say "usage'))).toBe(true);
    expect(chatChunkNeedsParse('{"choices":[{"delta":{"content":"usage"}}]}')).toBe(true);
  });

  test("never relays as text a chunk whose parse holds a usage, a finish_reason or an error (generated chunks)", () => {
    let seed = 7;
    const pick = <T>(items: readonly T[]): T => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return items[seed % items.length]!;
    };
    const values = [null, "stop", "", 0, {}, { prompt_tokens: 1 }, [], "null", 'say "usage"'];
    const keys = ["usage", "finish_reason", "error", "type", "content", "delta", "note"];
    const carries = (value: unknown): boolean => {
      if (Array.isArray(value)) return value.some(carries);
      if (typeof value !== "object" || value === null) return false;
      return Object.entries(value).some(
        ([key, inner]) =>
          ((key === "usage" || key === "finish_reason") && inner !== null) ||
          key === "error" ||
          (key === "type" && (inner === "error" || inner === "response.failed")) ||
          carries(inner),
      );
    };
    const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
    for (let i = 0; i < 20_000; i++) {
      const choice: Record<string, unknown> = { index: 0 };
      for (let k = 0; k < 3; k++) choice[pick(keys)] = pick(values);
      const chunk: Record<string, unknown> = { id: "c", choices: [choice] };
      chunk[pick(keys)] = pick([...values, "response.failed", "error"]);
      const plain = JSON.stringify(chunk, null, pick([0, 1, "\t", " \n"]));
      // Any letter of a key or a value may come as an escape: the same chunk to JSON.parse.
      const text = pick([0, 1, 2]) !== 0 ? plain.replace(/[a-z_](?=[a-z_.]*")/g, (c) => (pick([0, 1, 2]) === 0 ? escaped(c) : c)) : plain;
      if (!chatChunkNeedsParse(text)) expect(carries(JSON.parse(text))).toBe(false);
    }
  });
});
