import { afterAll, describe, expect, test } from "bun:test";
import { createPtyTools, ptyConfigSchema, PtyManager } from "../../src/pty/index.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

// What a model (or an MCP client) gets from exec_command and write_stdin: plain text, colour codes
// removed unless it asks for them; the API (`agentd exec`, a hop's local side) keeps them.

const manager = new PtyManager({ dataDir: makeTempDir("agentd-pty-model-"), config: ptyConfigSchema().parse({ close_grace_ms: 200 }) });
const tools = createPtyTools(manager);
const tool = (name: string) => tools.find((t) => t.name === name)!;
const ctx = { signal: new AbortController().signal, progress: () => undefined };
const COLOURED = "printf '\\033[31mred\\033[0m \\033]0;title\\007done\\n'";

afterAll(async () => {
  await manager.close();
  removeTempDirs();
});

describe("terminal output for models", () => {
  test("exec_command strips escape sequences by default, keeps them when asked", async () => {
    const exec = tool("exec_command");
    const plain = (await exec.execute(exec.parameters.parse({ cmd: COLOURED }), ctx)) as { output: string };
    expect(plain.output).toBe("red done\r\n");
    const raw = (await exec.execute(exec.parameters.parse({ cmd: COLOURED, strip_ansi: false }), ctx)) as { output: string };
    expect(raw.output).toContain("\x1b[31m");
  });

  test("write_stdin strips them too", async () => {
    const exec = tool("exec_command");
    const opened = (await exec.execute(exec.parameters.parse({ cmd: "cat", yield_time_ms: 300 }), ctx)) as { session_id: string };
    const stdin = tool("write_stdin");
    const typed = (await stdin.execute(stdin.parameters.parse({ session_id: opened.session_id, chars: "\x1b[1mbold\x1b[0m\n" }), ctx)) as {
      output: string;
    };
    expect(typed.output).not.toContain("\x1b");
    expect(typed.output).toContain("bold");
  });

  test("the API's own arguments keep the terminal as it was", async () => {
    const raw = await manager.exec({ cmd: COLOURED });
    expect(raw.output).toContain("\x1b[31m");
  });
});
