import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseSidecar, SIDECAR_SEPARATOR } from "../../src/agent/sidecarRecord.ts";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, parseSseEvents, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// The agent end to end through the compiled ./agentd: supervisor, worker, the in-process proxy
// and a scripted model upstream; the CLI's run/approve against it; a worker killed mid-approval.

// Not key-shaped on purpose: only the literal-secret redaction (not the shape rules) can hide it.
const SECRET = "e2e-provider-credential-Qz7Lm3Vx9Rk2";
const GATE = "agentd-e2e-gate";

let upstream: ScriptedUpstream;
let daemon: DaemonProcess;
let dataDir: string;
let work: string;

interface SessionView {
  session: { id: string; state: string };
  turns: Array<{ id: string; status: string; end_reason: string | null }>;
  messages: Array<{ role: string; body: Record<string, any> }>;
  tool_calls: Array<{ tool: string; outcome: string | null; status: string }>;
  approvals: Array<{ id: string; status: string; decided_by: string | null }>;
}

const session = (id: string) => api<SessionView>(daemon.url, `/api/sessions/${id}`);

/** Polls the session until its newest turn is done and the session is idle again. */
const finishedTurn = (id: string, turns: number) =>
  waitFor(
    `turn ${turns} of ${id} to end`,
    async () => {
      const view = await session(id);
      return view.session.state === "idle" && view.turns.length === turns && view.turns.at(-1)!.status === "done" ? view : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );

const gatedRuns = () =>
  existsSync(join(work, "gated.log")) ? readFileSync(join(work, "gated.log"), "utf8").split("\n").filter(Boolean) : [];

beforeAll(async () => {
  await ensureBinary();
  upstream = startScriptedUpstream();
  dataDir = makeTempDir("agentd-agentflow-data-");
  work = makeTempDir("agentd-agentflow-work-");
  // The model's commands run as the command user (agentd starts as root here): it writes there.
  chmodSync(work, 0o777);
  daemon = await startDaemon({
    dataDir,
    env: { AGENTD_E2E_PROVIDER_KEY: SECRET },
    config: {
      providers: [{ name: "scripted", base_url: upstream.url, api_key: "{env:AGENTD_E2E_PROVIDER_KEY}" }],
      agent: { model: "gpt-test" },
      // A harmless command shaped as a privileged one: a rule makes it ask, like `sudo *` would.
      approvals: { rules: [{ match: `*${GATE}*`, action: "ask" }] },
    },
  });
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  await upstream?.close();
  removeTempDirs();
}, 60_000);

describe("agent end to end against ./agentd", () => {
  test("a turn runs exec_command and answers; history, debug sidecar and logs keep the key out", async () => {
    const marker = join(work, "marker");
    upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "call_echo", name: "exec_command", arguments: JSON.stringify({ cmd: `echo hi > ${marker}` }) }] },
      { kind: "text", chunks: ["Wrote ", "the marker."] },
    );
    const { id } = await api<{ id: string }>(daemon.url, "/api/sessions", { body: {}, expect: 201 });
    const response = await fetch(`${daemon.url}/api/sessions/${id}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "write the marker" }),
      signal: AbortSignal.timeout(60_000),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = parseSseEvents(await response.text());
    const types = events.map((e) => e.type);
    expect(types).toContain("tool.start");
    expect(types).toContain("tool.end");
    expect(types.at(-1)).toBe("turn.end");
    expect(types.indexOf("tool.start")).toBeLessThan(types.indexOf("tool.end"));
    expect(events.find((e) => e.type === "tool.end")!.data).toMatchObject({ tool: "exec_command", outcome: "ok" });
    expect(events.at(-1)!.data).toMatchObject({ reason: "stop", content: "Wrote the marker." });
    expect(
      events
        .filter((e) => e.type === "text.delta")
        .map((e) => e.data.delta)
        .join(""),
    ).toBe("Wrote the marker.");
    expect(readFileSync(marker, "utf8").trim()).toBe("hi");

    // The proxy sent the provider's key upstream: the secret was really in play.
    expect(upstream.completionRequests().at(-1)!.headers.authorization).toBe(`Bearer ${SECRET}`);

    const view = await session(id);
    expect(view.session.state).toBe("idle");
    expect(view.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(view.messages[0]!.body.content).toBe("write the marker");
    expect(view.messages[1]!.body.tool_calls[0].function).toMatchObject({ name: "exec_command" });
    expect(view.messages[3]!.body.content).toBe("Wrote the marker.");
    expect(view.tool_calls).toHaveLength(1);
    expect(view.tool_calls[0]).toMatchObject({ tool: "exec_command", outcome: "ok" });
    expect(view.turns).toHaveLength(1);
    expect(view.turns[0]).toMatchObject({ status: "done", end_reason: "stop" });

    // The sidecar is written in the background: wait until the final answer is in it.
    const sidecarFile = join(dataDir, "debug", `session_${id}.debug.jsonl`);
    const text = await waitFor("the sidecar to hold both model responses and the tool call", () => {
      if (!existsSync(sidecarFile)) return undefined;
      const content = readFileSync(sidecarFile, "utf8");
      const kinds = parseSidecar(content).map((r) => r.kind);
      return kinds.filter((k) => k === "model.response").length >= 2 && kinds.includes("tool.end") ? content : undefined;
    });
    expect(readdirSync(join(dataDir, "debug"))).toContain(`session_${id}.debug.jsonl`);
    // Line by line: a JSON record, its `# ` rendering, then the separator; nothing else.
    const lines = text.split("\n");
    expect(lines.at(-1)).toBe("");
    for (const line of lines.slice(0, -1)) {
      if (line.startsWith("{")) expect(() => JSON.parse(line)).not.toThrow();
      else expect(line === SIDECAR_SEPARATOR || line.startsWith("# ")).toBe(true);
    }
    const records = parseSidecar(text);
    expect(records.every((r) => r.session === id)).toBe(true);
    const requests = records.filter((r) => r.kind === "model.request");
    expect(requests.length).toBeGreaterThanOrEqual(2);
    for (const request of requests) expect((request.headers as Record<string, string>).authorization).toBe("[redacted]");
    expect(text).not.toContain(SECRET);

    const logFile = join(dataDir, "logs", "agentd.log");
    await waitFor("the log file to record the turn", () => existsSync(logFile) && readFileSync(logFile, "utf8").includes('"tool.end"'));
    expect(readFileSync(logFile, "utf8")).not.toContain(SECRET);
    expect(JSON.stringify(daemon.lines)).not.toContain(SECRET);
  }, 120_000);

  test("a gated command: run exits 3 without a TTY, approve once runs it once, a second approve is refused, the turn ends by itself", async () => {
    const before = upstream.completionRequests().length;
    upstream.enqueue(
      {
        kind: "text",
        text: "Running it.",
        toolCalls: [
          { id: "call_gate", name: "exec_command", arguments: JSON.stringify({ cmd: `echo ran >> ${join(work, "gated.log")} # ${GATE}` }) },
        ],
      },
      { kind: "text", text: "The gated command ran." },
    );
    const paused = await runAgentd(["run", "run the gated command", "--url", daemon.url], { timeoutMs: 60_000 });
    expect(paused.code).toBe(3);
    const match = /agentd approve (apr_[0-9a-f]+) once\|session\|deny/.exec(paused.stderr);
    expect(match).not.toBeNull();
    expect(paused.stderr).toContain(GATE);
    const approvalId = match![1]!;
    const sessionId = /session (\S+)/.exec(paused.stderr)![1]!;
    expect(gatedRuns()).toEqual([]);
    expect((await session(sessionId)).session.state).toBe("awaiting_approval");

    const approved = await runAgentd(["approve", approvalId, "once", "--url", daemon.url], { timeoutMs: 30_000 });
    expect(approved.stderr).toBe("");
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain("allow_once");

    const view = await finishedTurn(sessionId, 1);
    expect(view.turns[0]!.end_reason).toBe("stop");
    expect(view.messages.at(-1)!.body.content).toBe("The gated command ran.");
    expect(view.approvals).toEqual([expect.objectContaining({ id: approvalId, status: "allow_once", decided_by: "cli" })]);
    expect(gatedRuns()).toEqual(["ran"]);
    expect(upstream.completionRequests().length).toBe(before + 2);

    const again = await runAgentd(["approve", approvalId, "once", "--url", daemon.url], { timeoutMs: 30_000 });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(`Approval ${approvalId} was already decided (allow_once by cli)`);
    const conflict = await api<{ error: { code: string } }>(daemon.url, `/api/approvals/${approvalId}`, {
      body: { decision: "allow_once" },
      expect: 409,
    });
    expect(conflict.error.code).toBe("approval_already_decided");
    expect(gatedRuns()).toEqual(["ran"]);
    expect(upstream.completionRequests().length).toBe(before + 2);
  }, 180_000);

  test("a pending approval survives kill -9 of the worker and is decided afterwards", async () => {
    upstream.enqueue(
      {
        kind: "text",
        toolCalls: [
          {
            id: "call_gate2",
            name: "exec_command",
            arguments: JSON.stringify({ cmd: `echo ran >> ${join(work, "gated.log")} # ${GATE} again` }),
          },
        ],
      },
      { kind: "text", text: "Ran it after the restart." },
    );
    const { id } = await api<{ id: string }>(daemon.url, "/api/sessions", { body: {}, expect: 201 });
    const stream = await fetch(`${daemon.url}/api/sessions/${id}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "run it again" }),
      signal: AbortSignal.timeout(60_000),
    });
    const events = parseSseEvents(await stream.text());
    expect(events.at(-1)!.type).toBe("approval_required");
    const approvalId = events.at(-1)!.data.approvals[0].approval_id as string;

    const oldPid = daemon.workerPid();
    await daemon.killWorker();
    expect(daemon.workerPid()).not.toBe(oldPid);

    const pending = await api<{ approvals: Array<{ id: string }> }>(daemon.url, "/api/approvals");
    expect(pending.approvals.map((a) => a.id)).toContain(approvalId);
    expect((await session(id)).session.state).toBe("awaiting_approval");
    expect(gatedRuns()).toEqual(["ran"]);

    const decided = await api<{ approval: { status: string }; resumed: boolean }>(daemon.url, `/api/approvals/${approvalId}`, {
      body: { decision: "allow_once" },
    });
    expect(decided).toMatchObject({ approval: { status: "allow_once" }, resumed: true });
    const view = await finishedTurn(id, 1);
    expect(view.turns[0]!.end_reason).toBe("stop");
    expect(view.messages.at(-1)!.body.content).toBe("Ran it after the restart.");
    expect(view.tool_calls).toEqual([expect.objectContaining({ tool: "exec_command", outcome: "ok" })]);
    expect(gatedRuns()).toEqual(["ran", "ran"]);
  }, 180_000);
});
