import { describe, expect, test } from "bun:test";
import { renderOutput } from "../../src/pty/renderOutput.ts";
import { splitHeadTail } from "../../src/pty/truncation.ts";
import { boundaryAtOrBefore, completePrefixLength } from "../../src/pty/utf8.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

describe("splitHeadTail", () => {
  test("leaves output within the budget alone", () => {
    expect(splitHeadTail(bytes("short"), 5)).toBeUndefined();
  });

  test("keeps the head and the tail and says how much was cut", () => {
    const split = splitHeadTail(bytes("0123456789abcdefghij"), 10)!;
    expect(text(split.head)).toBe("01234");
    expect(text(split.tail)).toBe("fghij");
    expect(split.omittedBytes).toBe(10);
  });

  test("never splits a UTF-8 character", () => {
    const split = splitHeadTail(bytes("aé€€€€€€€€€€b"), 8)!;
    expect(text(split.head)).toBe("aé");
    expect(text(split.tail)).toBe("€b");
    expect(split.head.length + split.omittedBytes + split.tail.length).toBe(bytes("aé€€€€€€€€€€b").length);
  });

  test("never splits an escape sequence", () => {
    const input = bytes(`${"x".repeat(8)}\x1b[38;5;196mred${"y".repeat(40)}\x1b[0m`);
    const split = splitHeadTail(input, 20)!;
    expect(text(split.head)).toBe("xxxxxxxx"); // the cut at 10 fell inside ESC[38;5;196m
    expect(text(split.tail)).toBe("yyyyyy\x1b[0m");
    // A tail cut inside ESC[0m moves back to take the whole sequence.
    expect(text(splitHeadTail(input, 6)!.tail)).toBe("\x1b[0m");
  });
});

describe("renderOutput", () => {
  test("returns short output as is, escapes included", () => {
    expect(renderOutput(bytes("\x1b[1mbold\x1b[0m\r\n"), { maxOutputTokens: 100, stripAnsi: false })).toEqual({
      output: "\x1b[1mbold\x1b[0m\r\n",
      truncated: false,
      originalBytes: 14,
    });
  });

  test("strips escapes on request", () => {
    expect(renderOutput(bytes("\x1b[1mbold\x1b[0m \x1b]0;title\x07done"), { maxOutputTokens: 100, stripAnsi: true }).output).toBe(
      "bold done",
    );
  });

  test("truncates to about 4 bytes a token with a marker", () => {
    const raw = bytes(`HEAD${"-".repeat(10_000)}TAIL`);
    const rendered = renderOutput(raw, { maxOutputTokens: 10, stripAnsi: false });
    expect(rendered.truncated).toBe(true);
    expect(rendered.originalBytes).toBe(10_008);
    expect(rendered.output).toBe(`HEAD${"-".repeat(16)}\n[… 9968 bytes of output truncated …]\n${"-".repeat(16)}TAIL`);
  });
});

describe("utf8 boundaries", () => {
  test("boundaryAtOrBefore steps back over continuation bytes", () => {
    const euro = bytes("a€");
    expect(boundaryAtOrBefore(euro, 2)).toBe(1);
    expect(boundaryAtOrBefore(euro, 3)).toBe(1);
    expect(boundaryAtOrBefore(euro, 4)).toBe(4);
  });

  test("completePrefixLength excludes only an unfinished trailing character", () => {
    expect(completePrefixLength(bytes("a€"))).toBe(4);
    expect(completePrefixLength(bytes("a€").subarray(0, 3))).toBe(1);
    expect(completePrefixLength(bytes("plain"))).toBe(5);
    expect(completePrefixLength(new Uint8Array([0x61, 0xf0, 0x9f]))).toBe(1);
  });
});
