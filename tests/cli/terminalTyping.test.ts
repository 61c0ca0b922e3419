import { describe, expect, test } from "bun:test";
import { LINE_PIECE, TerminalTyping } from "../../src/cli/terminalTyping.ts";

// What `agentd exec -i` types for piped input; tests/e2e/execInput.test.ts checks the bytes a
// real command on a real terminal reads back.

describe("TerminalTyping", () => {
  test("plain lines go as they are; the end is one ^D after a newline, two after a partial line", () => {
    const typing = new TerminalTyping();
    expect(typing.type("hi\nthere\n")).toBe("hi\nthere\n");
    expect(typing.end()).toBe("\x04");
    const partial = new TerminalTyping();
    expect(partial.type("no newline")).toBe("no newline");
    expect(partial.end()).toBe("\x04\x04");
  });

  test("every control character but newline and tab is quoted with ^V, DEL too", () => {
    const typing = new TerminalTyping();
    expect(typing.type("a\x03b\x04c\x15\x7f\t\r\x16\n")).toBe("a\x16\x03b\x16\x04c\x16\x15\x16\x7f\t\x16\r\x16\x16\n");
  });

  test("a line longer than a piece is handed over with ^D before it fills the terminal's buffer, never between ^V and its character", () => {
    const typing = new TerminalTyping();
    const keys = typing.type(`${"x".repeat(LINE_PIECE - 1)}\x03${"y".repeat(10)}`);
    expect(keys).toBe(`${"x".repeat(LINE_PIECE - 1)}\x04\x16\x03${"y".repeat(10)}`);
    // The pieces are counted in UTF-8 bytes: 400 three-byte characters are 1200 bytes.
    const wide = new TerminalTyping().type("漢".repeat(400));
    const pieces = wide.split("\x04");
    expect(pieces.map((piece) => Buffer.byteLength(piece))).toEqual([1023, 177]);
    // A newline starts the count again: no hand-over needed for many short lines.
    expect(new TerminalTyping().type(`${"z".repeat(1000)}\n`.repeat(5))).not.toContain("\x04");
  });
});
