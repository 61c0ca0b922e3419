import { expect, test } from "bun:test";
import { CommandJudge } from "../../../src/agent/shell/commandJudge.ts";
import { hasInvisibleChars, revealInvisibleChars } from "../../../src/core/text/index.ts";
import type { ToolDefinition } from "../../../src/core/tools/toolDefinition.ts";

test("bidi overrides, zero-width characters and separators are shown, not rendered", () => {
  const trojan = "echo safe \u202E;di odus\u202C \u200B# \u2066x\u2069\u2028";
  expect(hasInvisibleChars(trojan)).toBe(true);
  expect(revealInvisibleChars(trojan)).toBe("echo safe <U+202E>;di odus<U+202C> <U+200B># <U+2066>x<U+2069><U+2028>");
  expect(hasInvisibleChars("sudo systemctl restart nginx — ünïcödé")).toBe(false);
});

test("a command or typed text holding them asks in the sudo scope", async () => {
  const judge = new CommandJudge();
  const exec = { name: "exec_command" } as ToolDefinition;
  expect(await judge.judge("s", exec, { cmd: "echo hi" })).toEqual([]);
  expect((await judge.judge("s", exec, { cmd: "echo hi \u202E" })).join(" ")).toContain("bidi");
  const stdin = { name: "write_stdin", inputReader: () => ({ comm: "bash", privileged: false }) } as unknown as ToolDefinition;
  expect((await judge.judge("s", stdin, { session_id: "t", chars: "ls\u200B\n" })).join(" ")).toContain("bidi");
});
