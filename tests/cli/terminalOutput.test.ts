import { describe, expect, test } from "bun:test";
import { escapeControls } from "../../src/cli/terminalOutput.ts";

describe("control characters in printed data", () => {
  test("C0, DEL and C1 are shown as \\xHH; newline and tab stay", () => {
    expect(escapeControls("a\u001b]52;c;eA==\u0007b\u001b[2K\r\u009b1m\u007f\n\tz")).toBe(
      "a\\x1b]52;c;eA==\\x07b\\x1b[2K\\x0d\\x9b1m\\x7f\n\tz",
    );
    expect(escapeControls("plain ünïcode ✓")).toBe("plain ünïcode ✓");
  });
});
