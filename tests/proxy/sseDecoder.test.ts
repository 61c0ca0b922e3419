import { describe, expect, test } from "bun:test";
import { SseDecoder, SseOverflowError } from "../../src/proxy/upstream/sseDecoder.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("SSE decoder", () => {
  test("events split across reads, comments, keep-alives and CRLF", () => {
    const decoder = new SseDecoder();
    expect(decoder.push(bytes(': keep-alive\r\n\r\ndata: {"a"'))).toEqual([]);
    expect(decoder.push(bytes(":1}\r\n\r\nevent: response.created\r\ndata: {}\r\n"))).toEqual([
      { data: '{"a":1}', event: undefined, id: undefined },
    ]);
    expect(decoder.push(bytes("\r\n")).map((e) => [e.event, e.data])).toEqual([["response.created", "{}"]]);
  });

  test("a multi-byte character split between reads stays whole", () => {
    const decoder = new SseDecoder();
    const all = bytes("data: é\n\n");
    expect(decoder.push(all.slice(0, 7))).toEqual([]);
    expect(decoder.push(all.slice(7))[0]!.data).toBe("é");
  });

  test("a final event without its blank line is flushed at the end", () => {
    const decoder = new SseDecoder();
    decoder.push(bytes("data: [DONE]"));
    expect(decoder.end().map((e) => e.data)).toEqual(["[DONE]"]);
  });

  test("an event over the buffer limit is an error, not unbounded memory", () => {
    const decoder = new SseDecoder(1024);
    expect(() => decoder.push(bytes(`data: ${"x".repeat(4096)}`))).toThrow(SseOverflowError);
  });
});
