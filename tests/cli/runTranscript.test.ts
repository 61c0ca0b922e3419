import { describe, expect, test } from "bun:test";
import { runTranscriptLine } from "../../src/cli/runTranscript.ts";
import { escapeControls } from "../../src/cli/terminalOutput.ts";

const ESC = "\u001b";

/** What `agentd run` prints for one event, after the terminal guard every printed string goes through. */
function printed(type: string, data: Record<string, unknown>): string {
  const out = runTranscriptLine({ seq: 1, type, data });
  return escapeControls(`${out.text ?? ""}${out.note ?? ""}`);
}

describe("agentd run shows a tool's end", () => {
  test("exit 1 is failed, and the coloured output tail reads as text, not \\x1b[…", () => {
    const preview = JSON.stringify({ output: `${ESC}[31mE: Unable to locate package nginxx${ESC}[0m\r\n`, exit_code: 1 });
    const line = printed("tool.end", { tool: "exec_command", outcome: "ok", duration_ms: 1200, preview });
    expect(line).toStartWith("✗ exec_command failed, exit 1 in ");
    expect(line).toContain("  │ E: Unable to locate package nginxx");
    expect(line).not.toContain("\\x1b");
    expect(line).not.toContain("[31m");
  });

  test("an error message and a progress message lose their colours too", () => {
    expect(printed("tool.end", { tool: "t", outcome: "error", duration_ms: 5, error: { message: `${ESC}[1mboom${ESC}[0m` } })).toMatch(
      /^✗ t error in .*: boom$/,
    );
    expect(printed("tool.progress", { tool: "t", message: `${ESC}[2Kbuilding`, elapsed_ms: 3000 })).toContain("t building (");
  });

  test("the model's streamed text loses escape sequences; a denied call is not marked failed", () => {
    expect(printed("text.delta", { delta: `It printed ${ESC}[32mOK${ESC}[0m.` })).toBe("It printed OK.");
    expect(printed("tool.end", { tool: "exec_command", outcome: "denied", duration_ms: 0 })).toStartWith("← exec_command denied");
  });
});
