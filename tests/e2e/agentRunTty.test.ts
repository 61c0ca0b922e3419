import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setLogSink } from "../../src/core/log/index.ts";
import { ptyConfigSchema, PtyManager, type PtyCommandResult } from "../../src/pty/index.ts";
import { stripAnsi } from "../../src/core/text/index.ts";
import { ensureBinary } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { daemonToken } from "../support/daemonTokens.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// `agentd run` on a real pseudo-terminal (our own PtyManager): the approval question appears on the
// terminal, the answer typed into it decides the call, and the turn goes on to its final answer.

const GATE = "agentd-e2e-tty-gate";
// Variables that would point the CLI at the developer's daemon, config or token instead of ours.
const HOST_VARIABLES = [
  "AGENTD_CONFIG",
  "AGENTD_DATA_DIR",
  "AGENTD_URL",
  "AGENTD_TOKEN",
  "AGENTD_SUPERVISOR_PID",
  "AGENTD_WORKER_RESTARTS",
];
const RUN_TIMEOUT_MS = 90_000;

const ptyLog: string[] = [];
setLogSink((line) => void ptyLog.push(line));

let binary: string;
let upstream: ScriptedUpstream;
let daemon: DaemonProcess;
let work: string;
let terminals: PtyManager;
const open = new Set<string>();

interface SessionView {
  session: { id: string; state: string };
  turns: Array<{ status: string; end_reason: string | null }>;
  tool_calls: Array<{ tool: string; outcome: string | null }>;
  approvals: Array<{ status: string; decided_by: string | null; summary: string }>;
}

const shellQuote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
const gatedCommand = (line: string, file: string) => `echo ${line} >> ${join(work, file)} # ${GATE}`;
const linesOf = (file: string) => (existsSync(join(work, file)) ? readFileSync(join(work, file), "utf8").split("\n").filter(Boolean) : []);
const question = (cmd: string) => `Allow exec_command ${JSON.stringify(cmd)}? [o]nce / [s]ession / [d]eny`;

/** `agentd run PROMPT --url URL` on a fresh pseudo-terminal, read and typed into like a person would. */
class TerminalRun {
  private raw = "";
  private result: PtyCommandResult;
  /** The PTY session; it ends when the program's exit has been read. */
  private readonly id: string | null;

  private constructor(first: PtyCommandResult) {
    this.id = first.session_id;
    if (this.id) open.add(this.id);
    this.result = first;
    this.absorb(first);
  }

  static async start(prompt: string): Promise<TerminalRun> {
    const unset = HOST_VARIABLES.map((name) => `-u ${name}`).join(" ");
    // The person at this terminal has the daemon's token (started as root, decisions need it).
    const token = `AGENTD_TOKEN=${shellQuote(daemonToken(daemon.url) ?? "")}`;
    const cmd = `exec env ${unset} ${token} ${shellQuote(binary)} run ${shellQuote(prompt)} --url ${shellQuote(daemon.url)}`;
    // Wide enough that the question is never wrapped by the line editor.
    return new TerminalRun(await terminals.exec({ cmd, cols: 400, rows: 50, yield_time_ms: 250 }));
  }

  /** Everything the terminal showed so far, escape sequences removed and line ends as "\n". */
  get screen(): string {
    return stripAnsi(this.raw).replace(/\r+\n/g, "\n");
  }

  /** Polls the terminal (empty writes) until `done` holds for the screen; fails if the program exits first or at the deadline. */
  async waitFor(description: string, done: (screen: string) => boolean, timeoutMs = RUN_TIMEOUT_MS): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (done(this.screen)) return this.screen;
      if (!this.result.running)
        throw new Error(`agentd run exited ${this.result.exit_code} before ${description}; the terminal showed:\n${this.screen}`);
      if (Date.now() > deadline)
        throw new Error(`Timed out after ${timeoutMs} ms waiting for ${description}; the terminal showed:\n${this.screen}`);
      await this.read("", 200);
    }
  }

  /** Types `chars` (a key press then Enter is "o\r"). */
  async type(chars: string): Promise<void> {
    if (!this.result.running) throw new Error(`agentd run already exited ${this.result.exit_code}; the terminal showed:\n${this.screen}`);
    await this.read(chars, 50);
  }

  /** Polls until the program exits and returns its exit code. */
  async exited(timeoutMs = RUN_TIMEOUT_MS): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.result.running) {
      if (Date.now() > deadline) throw new Error(`agentd run still running after ${timeoutMs} ms; the terminal showed:\n${this.screen}`);
      await this.read("", 500);
    }
    return this.result.exit_code!;
  }

  private async read(chars: string, yieldMs: number): Promise<void> {
    this.absorb(await terminals.writeStdin({ session_id: this.id!, chars, yield_time_ms: yieldMs }));
  }

  private absorb(result: PtyCommandResult): void {
    this.result = result;
    this.raw += result.output;
    if (!result.running && this.id) open.delete(this.id);
  }
}

const sessionIdOf = (screen: string) => {
  const match = /^session (\S+)$/m.exec(screen);
  if (!match) throw new Error(`no "session ID" line on the terminal:\n${screen}`);
  return match[1]!;
};

beforeAll(async () => {
  binary = await ensureBinary();
  upstream = startScriptedUpstream();
  work = makeTempDir("agentd-runtty-work-");
  // The commands run as the command user (agentd starts as root here): they write there.
  chmodSync(work, 0o777);
  const dataDir = makeTempDir("agentd-runtty-data-");
  daemon = await startDaemon({
    dataDir,
    config: {
      providers: [{ name: "scripted", base_url: upstream.url, api_key: "scripted-key" }],
      agent: { model: "gpt-test" },
      // A harmless command shaped as a privileged one: the rule makes it ask, as `sudo *` would.
      approvals: { rules: [{ match: `*${GATE}*`, action: "ask" }] },
    },
  });
  terminals = new PtyManager({ dataDir: makeTempDir("agentd-runtty-pty-"), config: ptyConfigSchema().parse({ close_grace_ms: 500 }) });
}, 180_000);

afterEach(async () => {
  // A failed test may leave its terminal open: end it (and the agentd run in it) here.
  for (const id of [...open]) {
    open.delete(id);
    if (terminals.list().some((s) => s.id === id)) await terminals.closeSession({ session_id: id, force: true });
  }
  // Replies a failed test did not get to must not answer the next test's turn.
  while (upstream.pending() > 0) {
    const leftover = await fetch(`${upstream.url}/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "gpt-test" }),
      signal: AbortSignal.timeout(10_000),
    });
    await leftover.text();
  }
}, 30_000);

afterAll(async () => {
  await terminals?.close();
  await daemon?.stop();
  await upstream?.close();
  removeTempDirs();
}, 60_000);

describe("agentd run on a terminal", () => {
  test("asks before a gated command; o + Enter runs it once and the final answer is printed", async () => {
    const cmd = gatedCommand("once", "once.log");
    const before = upstream.completionRequests().length;
    upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "call_once", name: "exec_command", arguments: JSON.stringify({ cmd }) }] },
      { kind: "text", chunks: ["The gated ", "command ran once."] },
    );
    const run = await TerminalRun.start("run the gated command");
    const asked = await run.waitFor("the approval question", (screen) => screen.includes(question(cmd)));
    expect(asked.endsWith(`${question(cmd)} `)).toBe(true);
    expect(linesOf("once.log")).toEqual([]);
    const sessionId = sessionIdOf(asked);
    expect((await api<SessionView>(daemon.url, `/api/sessions/${sessionId}`)).session.state).toBe("awaiting_approval");

    await run.type("o\r");
    expect(await run.exited()).toBe(0);
    const screen = run.screen;
    expect(screen).toContain(`✓ exec_command ${JSON.stringify(cmd)}: allow_once (by cli)`);
    expect(screen).toContain("← exec_command ok");
    expect(screen).toContain("The gated command ran once.");
    expect(screen.indexOf(question(cmd))).toBeLessThan(screen.indexOf("The gated command ran once."));
    expect(screen.split("Allow exec_command").length - 1).toBe(1);
    expect(linesOf("once.log")).toEqual(["once"]);

    const view = await api<SessionView>(daemon.url, `/api/sessions/${sessionId}`);
    expect(view.session.state).toBe("idle");
    expect(view.turns).toEqual([expect.objectContaining({ status: "done", end_reason: "stop" })]);
    expect(view.approvals).toEqual([expect.objectContaining({ status: "allow_once", decided_by: "cli" })]);
    expect(view.tool_calls).toEqual([expect.objectContaining({ tool: "exec_command", outcome: "ok" })]);
    expect(upstream.completionRequests().length).toBe(before + 2);
  }, 180_000);

  test("d + Enter denies: the command does not run and the model is told it was denied", async () => {
    const cmd = gatedCommand("denied", "denied.log");
    const before = upstream.completionRequests().length;
    upstream.enqueue(
      {
        kind: "text",
        text: "I will run it.",
        toolCalls: [{ id: "call_denied", name: "exec_command", arguments: JSON.stringify({ cmd }) }],
      },
      { kind: "text", text: "Understood, I did not run it." },
    );
    const run = await TerminalRun.start("run the gated command, if allowed");
    const asked = await run.waitFor("the approval question", (screen) => screen.includes(question(cmd)));
    // The model's unfinished line of text ends before the question, which starts a line of its own.
    expect(asked).toContain(`I will run it.\n${question(cmd)}`);
    const sessionId = sessionIdOf(asked);

    await run.type("d\r");
    expect(await run.exited()).toBe(0);
    const screen = run.screen;
    expect(screen).toContain(`[d]eny d\n✓ exec_command ${JSON.stringify(cmd)}: deny (by cli)`);
    expect(screen).toContain("← exec_command denied");
    expect(screen).toContain("Understood, I did not run it.");
    expect(linesOf("denied.log")).toEqual([]);

    const requests = upstream.completionRequests();
    expect(requests.length).toBe(before + 2);
    const toolMessages = (requests.at(-1)!.body.messages as Array<{ role: string; tool_call_id?: string; content: string }>).filter(
      (m) => m.role === "tool",
    );
    expect(toolMessages).toHaveLength(1);
    expect(toolMessages[0]!.tool_call_id).toBe("call_denied");
    expect(JSON.parse(toolMessages[0]!.content)).toEqual({
      error: { code: "denied", message: "denied by the user: exec_command was not run" },
    });

    const view = await api<SessionView>(daemon.url, `/api/sessions/${sessionId}`);
    expect(view.turns).toEqual([expect.objectContaining({ status: "done", end_reason: "stop" })]);
    expect(view.approvals).toEqual([expect.objectContaining({ status: "deny", decided_by: "cli" })]);
    expect(view.tool_calls).toEqual([expect.objectContaining({ tool: "exec_command", outcome: "denied" })]);
  }, 180_000);

  test("s + Enter allows for the session: a second call of the same scope in the turn is not asked again", async () => {
    const first = gatedCommand("one", "session.log");
    const second = gatedCommand("two", "session.log");
    const before = upstream.completionRequests().length;
    upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "call_first", name: "exec_command", arguments: JSON.stringify({ cmd: first }) }] },
      { kind: "text", toolCalls: [{ id: "call_second", name: "exec_command", arguments: JSON.stringify({ cmd: second }) }] },
      { kind: "text", text: "Both gated commands ran." },
    );
    const run = await TerminalRun.start("run the gated command twice");
    const asked = await run.waitFor("the approval question", (screen) => screen.includes(question(first)));
    expect(linesOf("session.log")).toEqual([]);
    const sessionId = sessionIdOf(asked);

    await run.type("s\r");
    expect(await run.exited()).toBe(0);
    const screen = run.screen;
    expect(screen).toContain(`✓ exec_command ${JSON.stringify(first)}: allow_session (by cli)`);
    expect(screen).toContain("Both gated commands ran.");
    expect(screen).not.toContain(question(second));
    expect(screen.split("Allow exec_command").length - 1).toBe(1);
    expect(screen.split("← exec_command ok").length - 1).toBe(2);
    expect(linesOf("session.log")).toEqual(["one", "two"]);

    const view = await api<SessionView>(daemon.url, `/api/sessions/${sessionId}`);
    expect(view.turns).toEqual([expect.objectContaining({ status: "done", end_reason: "stop" })]);
    expect(view.approvals).toEqual([expect.objectContaining({ status: "allow_session", decided_by: "cli" })]);
    expect(view.tool_calls).toEqual([expect.objectContaining({ outcome: "ok" }), expect.objectContaining({ outcome: "ok" })]);
    expect(upstream.completionRequests().length).toBe(before + 3);
  }, 180_000);
});
