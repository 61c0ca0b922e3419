import { describe, expect, test } from "bun:test";
import { OutputBuffer } from "../../src/pty/outputBuffer.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

describe("OutputBuffer", () => {
  test("returns appended output once, in order", () => {
    const buffer = new OutputBuffer(100);
    buffer.append(bytes("hello "));
    buffer.append(bytes("world"));
    expect(buffer.unreadBytes).toBe(11);
    const taken = buffer.take(false);
    expect(text(taken.bytes)).toBe("hello world");
    expect(taken.droppedBytes).toBe(0);
    expect(buffer.take(false).bytes.length).toBe(0);
    expect(buffer.totalBytes).toBe(11);
  });

  test("copies input, so the caller may reuse its read buffer", () => {
    const buffer = new OutputBuffer(100);
    const scratch = bytes("abc");
    buffer.append(scratch);
    scratch.set(bytes("xyz"));
    expect(text(buffer.take(false).bytes)).toBe("abc");
  });

  test("drops the oldest unread bytes beyond capacity and counts them", () => {
    const buffer = new OutputBuffer(10);
    buffer.append(bytes("0123456"));
    buffer.append(bytes("789abc"));
    expect(buffer.unreadBytes).toBe(10);
    const taken = buffer.take(false);
    expect(text(taken.bytes)).toBe("3456789abc");
    expect(taken.droppedBytes).toBe(3);
    expect(buffer.totalBytes).toBe(13);
    buffer.append(bytes("z"));
    expect(buffer.take(false).droppedBytes).toBe(0);
  });

  test("a single chunk larger than the capacity keeps its tail", () => {
    const buffer = new OutputBuffer(4);
    buffer.append(bytes("ab"));
    buffer.append(bytes("0123456789"));
    const taken = buffer.take(false);
    expect(text(taken.bytes)).toBe("6789");
    expect(taken.droppedBytes).toBe(8);
  });

  test("memory stays bounded under a flood", () => {
    const buffer = new OutputBuffer(4096);
    const chunk = new Uint8Array(1000).fill(121);
    for (let i = 0; i < 10_000; i++) buffer.append(chunk);
    expect(buffer.unreadBytes).toBe(4096);
    expect(buffer.take(false).droppedBytes).toBe(10_000_000 - 4096);
  });

  test("can hold back a split UTF-8 character until the rest arrives", () => {
    const buffer = new OutputBuffer(100);
    const euro = bytes("€"); // e2 82 ac
    buffer.append(bytes("price 5"));
    buffer.append(euro.subarray(0, 2));
    expect(text(buffer.take(true).bytes)).toBe("price 5");
    buffer.append(euro.subarray(2));
    expect(text(buffer.take(true).bytes)).toBe("€");
  });
});
