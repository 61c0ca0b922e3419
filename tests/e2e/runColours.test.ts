import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary } from "../support/binary.ts";
import { daemonToken } from "../support/daemonTokens.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";
import { TmuxTerminal } from "./support/tmuxTerminal.ts";

// `agentd run` on a real terminal (tmux) while the agent's command prints colours and fails: the
// terminal shows the words and "failed, exit 1", never `\x1b[…` (the CLI's guard would print an
// escape it was handed as that text).

let binary: string;
let upstream: ScriptedUpstream;
let daemon: DaemonProcess;
let term: TmuxTerminal;

const shellQuote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

beforeAll(async () => {
  binary = await ensureBinary();
  upstream = startScriptedUpstream();
  const dataDir = join(makeTempDir("agentd-run-colours-"), "data");
  mkdirSync(dataDir);
  daemon = await startDaemon({
    dataDir,
    config: { providers: [{ name: "scripted", base_url: upstream.url, api_key: "scripted-key" }], agent: { model: "gpt-test" } },
  });
  term = new TmuxTerminal();
}, 180_000);

afterAll(async () => {
  term?.kill();
  await daemon?.stop();
  await upstream?.close();
  removeTempDirs();
}, 60_000);

describe("agentd run and a command's colours", () => {
  test("coloured failing output reads as text under ✗ … failed, exit 1; the model's coloured text too", async () => {
    upstream.enqueue(
      {
        kind: "text",
        toolCalls: [
          {
            id: "c1",
            name: "exec_command",
            arguments: JSON.stringify({
              cmd: "printf '\\033[1;31mE: red-failure\\033[0m\\n\\033]0;window-title\\007plain-tail\\n'; exit 1",
            }),
          },
        ],
      },
      { kind: "text", text: "The command said \u001b[31mE: red-failure\u001b[0m and exited 1." },
    );
    const cwd = makeTempDir("agentd-run-colours-cwd-");
    const window = term.start(`cd ${shellQuote(cwd)} && HOME=${shellQuote(cwd)} ${shellQuote(binary)} run 'show the failure'`, {
      AGENTD_URL: daemon.url,
      AGENTD_TOKEN: daemonToken(daemon.url) ?? "",
    });
    expect(await term.exitCode(window)).toBe(0);
    const screen = term.screen(window);
    expect(screen).toMatch(/^✗ exec_command failed, exit 1 in /m);
    expect(screen).toContain("  │ E: red-failure\n");
    expect(screen).toContain("  │ plain-tail\n");
    expect(screen).toContain("The command said E: red-failure and exited 1.");
    expect(screen).not.toContain("\\x1b");
    expect(screen).not.toContain("[31m");
    // The OSC title went with its sequence: only the command line the model sent names it.
    expect(screen.split("\n").filter((line) => line.includes("window-title"))).toEqual([expect.stringMatching(/^→ exec_command /)]);
  }, 120_000);
});
