import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { daemonToken } from "../support/daemonTokens.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";
import { TmuxTerminal } from "./support/tmuxTerminal.ts";

// The CLI on a real terminal (tmux), run from a directory unrelated to the daemon: `agentd run`'s
// one-key questions, a decision made elsewhere, Ctrl-C, tool exit codes, and `serve`'s first line.

const GATE = "agentd-e2e-cli-gate";
const shellQuote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

let binary: string;
let upstream: ScriptedUpstream;
let daemon: DaemonProcess;
let term: TmuxTerminal;
let cwd: string;

interface PendingApproval {
  id: string;
  session_id: string;
  status: string;
}

beforeAll(async () => {
  binary = await ensureBinary();
  upstream = startScriptedUpstream();
  const dataDir = join(makeTempDir("agentd-cli-term-data-"), "data");
  mkdirSync(dataDir);
  daemon = await startDaemon({
    dataDir,
    config: {
      providers: [{ name: "scripted", base_url: upstream.url, api_key: "scripted-key" }],
      agent: { model: "gpt-test" },
      approvals: { rules: [{ match: `*${GATE}*`, action: "ask" }] },
    },
  });
  term = new TmuxTerminal();
}, 180_000);

afterEach(() => {
  // Nothing the CLI did may leave a store or a .agentd in the directory it ran from.
  if (cwd) expect(readdirSync(cwd)).toEqual([]);
});

afterAll(async () => {
  term?.kill();
  await daemon?.stop();
  await upstream?.close();
  removeTempDirs();
}, 60_000);

/** `agentd run PROMPT` in a fresh unrelated directory, on a new tmux window; the daemon is named by AGENTD_URL. */
function startRun(prompt: string): string {
  cwd = makeTempDir("agentd-cli-term-cwd-");
  return term.start(`cd ${shellQuote(cwd)} && HOME=${shellQuote(cwd)} ${shellQuote(binary)} run ${shellQuote(prompt)}`, {
    AGENTD_URL: daemon.url,
    // The person at this terminal has the daemon's token (started as root, decisions need it).
    AGENTD_TOKEN: daemonToken(daemon.url) ?? "",
  });
}

const sessionOf = (screen: string) => /^session (\S+)$/m.exec(screen)![1]!;

async function pendingApproval(sessionId: string): Promise<PendingApproval> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { approvals } = await api<{ approvals: PendingApproval[] }>(daemon.url, "/api/approvals");
    const found = approvals.find((a) => a.session_id === sessionId && a.status === "pending");
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no pending approval for ${sessionId}`);
    await Bun.sleep(100);
  }
}

describe("agentd run on a terminal", () => {
  test("one key answers (no Enter); a tool that exits 127 shows ✗, its exit code, its output tail and a human duration", async () => {
    const cmd = `echo tail-line-one; echo tail-line-two; agentd-no-such-command-xyz # ${GATE}`;
    upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "call_127", name: "exec_command", arguments: JSON.stringify({ cmd }) }] },
      { kind: "text", text: "The command was not found." },
    );
    const w = startRun("run the missing command");
    await term.waitFor(w, "the question", (s) => s.includes("[o]nce / [s]ession / [d]eny"));
    term.keys(w, "o");
    expect(await term.exitCode(w)).toBe(0);
    const screen = term.screen(w);
    expect(screen).toContain("✓ exec_command");
    expect(screen).toMatch(/✗ exec_command failed, exit 127 in (\d+ ms|\d+\.\d s)/);
    expect(screen).not.toContain("← exec_command ok");
    expect(screen).toContain("│ tail-line-two");
    expect(screen).toContain("The command was not found.");

    // `agentd debug` from elsewhere: a readable transcript through the daemon, the raw records with --json.
    const sessionId = sessionOf(screen);
    const debug = await runAgentd(["debug", sessionId], { cwd, env: { HOME: cwd, AGENTD_URL: daemon.url } });
    expect(debug.stderr).toBe("");
    expect(debug.code).toBe(0);
    expect(debug.stdout).toStartWith(`session ${sessionId}\n`);
    expect(debug.stdout).toMatch(/model request #1 to gpt-test, \d+ messages/);
    expect(debug.stdout).toContain("user: run the missing command");
    expect(debug.stdout).toContain("calls exec_command");
    expect(debug.stdout).toMatch(/tool exec_command ok in (\d+ ms|\d+\.\d s)/);
    expect(debug.stdout).toContain("approval allow_once by cli");
    expect(debug.stdout).toContain("assistant: The command was not found.");
    expect(debug.stdout).not.toMatch(/authorization|content-type|headers/i);
    const raw = await runAgentd(["debug", sessionId, "--json"], { cwd, env: { HOME: cwd, AGENTD_URL: daemon.url } });
    const kinds = raw.stdout
      .trimEnd()
      .split("\n")
      .map((l) => (JSON.parse(l) as { kind: string }).kind);
    expect(kinds).toContain("model.request");
    expect(kinds).toContain("tool.end");
  }, 120_000);

  test("a decision made elsewhere (the API, from another process) ends the question and says who decided", async () => {
    const cmd = `echo elsewhere # ${GATE}`;
    upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "call_else", name: "exec_command", arguments: JSON.stringify({ cmd }) }] },
      { kind: "text", text: "Denied elsewhere, so I stopped." },
    );
    const w = startRun("run it if someone allows");
    const asked = await term.waitFor(w, "the question", (s) => s.includes("[o]nce / [s]ession / [d]eny"));
    const approval = await pendingApproval(sessionOf(asked));
    const decided = Bun.spawnSync([
      "curl",
      "-sf",
      "-X",
      "POST",
      "-H",
      "content-type: application/json",
      "-H",
      `authorization: Bearer ${daemonToken(daemon.url)}`,
      "-d",
      JSON.stringify({ decision: "deny", decided_by: "page" }),
      `${daemon.url}/api/approvals/${approval.id}`,
    ]);
    expect(decided.exitCode).toBe(0);
    expect(await term.exitCode(w)).toBe(0);
    const screen = term.screen(w);
    expect(screen).toContain("— decided elsewhere by page");
    expect(screen).toContain("deny (by page)");
    expect(screen).toContain("Denied elsewhere, so I stopped.");
  }, 120_000);

  test("Ctrl-C then c cancels the turn and says so (exit 130)", async () => {
    upstream.enqueue({
      kind: "text",
      toolCalls: [{ id: "call_slow", name: "exec_command", arguments: JSON.stringify({ cmd: "sleep 30" }) }],
    });
    const w = startRun("wait a while");
    const started = await term.waitFor(w, "the tool start", (s) => s.includes("→ exec_command"));
    const sessionId = sessionOf(started);
    term.keys(w, "C-c");
    await term.waitFor(w, "the Ctrl-C question", (s) => s.includes("[c]ancel the turn, [l]eave it running and detach, [w]atch on"));
    term.keys(w, "c");
    const cancelCode = await term.exitCode(w);
    expect({ cancelCode, screen: term.screen(w) }).toEqual({ cancelCode: 130, screen: expect.any(String) });
    expect(term.screen(w)).toContain(`Cancelled the turn of session ${sessionId}.`);
    const view = await api<{ turns: Array<{ status: string }> }>(daemon.url, `/api/sessions/${sessionId}`);
    expect(view.turns.at(-1)!.status).not.toBe("running");
  }, 120_000);

  test("at the Ctrl-C question d means nothing (it is deny elsewhere), l detaches and prints the exact agentd attach that follows on", async () => {
    const cmd = `echo after-attach # ${GATE}`;
    upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "call_detach", name: "exec_command", arguments: JSON.stringify({ cmd }) }] },
      { kind: "text", text: "Finished after the attach." },
    );
    const w = startRun("run it once allowed");
    const asked = await term.waitFor(w, "the question", (s) => s.includes("[o]nce / [s]ession / [d]eny"));
    const sessionId = sessionOf(asked);
    term.keys(w, "C-c");
    await term.waitFor(w, "the Ctrl-C question", (s) => s.includes("[l]eave it running and detach"));
    term.keys(w, "d");
    await term.waitFor(w, "the re-ask", (s) => s.includes("Press c (cancel the turn), l (leave it running) or w (watch on)."));
    term.keys(w, "l");
    expect(await term.exitCode(w)).toBe(0);
    const detached = term.screen(w);
    const line = /^Detached: the turn goes on in agentd\. Re-attach \(Ctrl-C then c cancels it\): (agentd attach .*)$/m.exec(detached);
    expect(line).not.toBeNull();
    const reattach = line![1]!;
    expect(reattach).toMatch(new RegExp(`^agentd attach ${sessionId} --after \\d+$`));
    // Still waiting for the decision: nobody answered it.
    const pending = await pendingApproval(sessionId);
    // Without a terminal, attach cannot ask: it names the decision and the command to follow on (exit 3).
    const noTty = await runAgentd(["attach", sessionId], { cwd, env: { HOME: cwd, AGENTD_URL: daemon.url } });
    expect(noTty.code).toBe(3);
    expect(noTty.stderr).toContain(`agentd approve ${pending.id} once|session|deny`);
    expect(noTty.stderr).toMatch(new RegExp(`Then follow the turn with: agentd attach ${sessionId} --after \\d+`));
    expect((await pendingApproval(sessionId)).status).toBe("pending");

    // The printed command, as printed, on another terminal: it asks the pending question, follows the
    // turn the decision continues, and ends with it.
    const a = term.start(`cd ${shellQuote(cwd)} && HOME=${shellQuote(cwd)} ${reattach.replace(/^agentd/, shellQuote(binary))}`, {
      AGENTD_URL: daemon.url,
      AGENTD_TOKEN: daemonToken(daemon.url) ?? "",
    });
    await term.waitFor(a, "the pending question", (s) => s.includes("[o]nce / [s]ession / [d]eny"));
    expect(term.screen(a)).toStartWith(`session ${sessionId} (awaiting_approval)`);
    term.keys(a, "o");
    expect(await term.exitCode(a)).toBe(0);
    const followed = term.screen(a);
    expect(followed).toContain("after-attach");
    expect(followed).toContain("Finished after the attach.");
    expect((await api<{ session: { state: string } }>(daemon.url, `/api/sessions/${sessionId}`)).session.state).toBe("idle");
  }, 120_000);

  test("agentd attach on an idle session replays it and exits 0; an unknown session exits 1", async () => {
    upstream.enqueue({ kind: "text", text: "Nothing to do." });
    const w = startRun("say nothing");
    expect(await term.exitCode(w)).toBe(0);
    const sessionId = sessionOf(term.screen(w));
    const env = { HOME: cwd, AGENTD_URL: daemon.url };
    const replay = await runAgentd(["attach", sessionId], { cwd, env });
    expect({ code: replay.code, stderr: replay.stderr }).toEqual({ code: 0, stderr: `session ${sessionId} (idle)\n` });
    expect(replay.stdout).toContain("Nothing to do.");
    const unknown = await runAgentd(["attach", "ses_000000000000"], { cwd, env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("ses_000000000000");
    const badAfter = await runAgentd(["attach", sessionId, "--after", "abc"], { cwd, env });
    expect(badAfter.code).toBe(2);
  }, 120_000);
});

describe("agentd serve on a terminal", () => {
  test("prints 'agentd VERSION listening on URL, status at URL/status' and human log lines, not JSON", async () => {
    cwd = "";
    const dataDir = join(makeTempDir("agentd-cli-serve-"), "data");
    const w = term.start(`${shellQuote(binary)} serve --port 0 --data-dir ${shellQuote(dataDir)} --config /dev/null`);
    const screen = await term.waitFor(w, "the listening line", (s) => /listening on http/.test(s));
    expect(screen).toMatch(
      /^agentd \d+\.\d+\.\d+\S* listening on http:\/\/127\.0\.0\.1:\d+, status at http:\/\/127\.0\.0\.1:\d+\/status$/m,
    );
    expect(screen).toMatch(/^\d\d:\d\d:\d\d INFO {2}supervisor supervisor\.start /m);
    expect(screen).not.toContain('{"ts"');
    // The log file stays JSON whatever the terminal shows.
    const logged = readFileSync(join(dataDir, "logs", "agentd.log"), "utf8")
      .split("\n")
      .filter(Boolean);
    expect(logged.every((line) => line.startsWith('{"ts"'))).toBe(true);
    term.keys(w, "C-c");
    expect(await term.exitCode(w, 30_000)).toBe(0);
    expect(existsSync(join(dataDir, "ready.json"))).toBe(false);
  }, 120_000);
});
