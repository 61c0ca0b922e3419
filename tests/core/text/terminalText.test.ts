import { describe, expect, test } from "bun:test";
import { stripAnsi, terminalText } from "../../../src/core/text/index.ts";

const ESC = "\u001b";

describe("stripAnsi", () => {
  test("SGR colours, cursor moves, erase, private modes and 8-bit CSI go; text stays", () => {
    expect(stripAnsi(`${ESC}[1;31mFAIL${ESC}[0m ${ESC}[38;5;208mx${ESC}[m${ESC}[2K${ESC}[3A${ESC}[?25l\u009b1mz`)).toBe("FAIL xz");
  });

  test("OSC titles, hyperlinks and clipboard writes go, ended by BEL, ESC \\ or cut off", () => {
    expect(stripAnsi(`a${ESC}]0;title\u0007b${ESC}]8;;https://x.test${ESC}\\link${ESC}]8;;${ESC}\\c${ESC}]52;c;eA==`)).toBe("ablinkc");
  });

  test("charset choices, keypad modes and a stray ESC at the end go", () => {
    expect(stripAnsi(`${ESC}(Bone${ESC}=two${ESC}`)).toBe("onetwo");
  });

  test("text without escapes is unchanged, including brackets and unicode", () => {
    const plain = "[ok] 100% ✓ ünïcode [31m";
    expect(stripAnsi(plain)).toBe(plain);
  });
});

describe("terminalText", () => {
  test("CRLF becomes LF and a redrawn progress line keeps every frame on its own line", () => {
    expect(terminalText(`10%\r50%\r100%\r\ndone\r\n`)).toBe("10%\n50%\n100%\ndone\n");
  });
});
