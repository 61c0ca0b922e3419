import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { defineTool, type DirectCallAnswer, type ToolDefinition } from "../../src/agent/index.ts";
import { waitFor } from "../support/waitFor.ts";
import { harnessPerTest, recordingTracer, type Harness, type RecordedSpan } from "./agentHarness.ts";
import { echoTool, fakeExecTool } from "./testTools.ts";
import { DeltaBatch } from "../../src/agent/deltaBatch.ts";
import { repeatedCall, repeatedCallMessage } from "../../src/agent/repeatedCall.ts";
import { renderPrometheus } from "../../src/core/metrics/index.ts";

// The one tool-call pipeline: MCP's direct calls traced like the agent's, per-session state let go
// once a session is idle, and a turn stopped when the model repeats a call without progress.

const harness = harnessPerTest();
const GATE = "pipeline-gate";

function directCall(h: Harness, sessionId: string, tool: string, args: Record<string, unknown>, signal = new AbortController().signal) {
  return h.agent.calls.call({ sessionId, tool, args, signal, progress: () => {} });
}

const mcpSession = (h: Harness) => h.agent.calls.openSession({ name: "pipeline-test", version: "1" }).id;
const gauge = (h: Harness, name: string) =>
  Number(new RegExp(`^${name} (\\S+)$`, "m").exec(renderPrometheus(h.agent.metricFamilies()))?.[1]);
const toolSpans = (spans: RecordedSpan[], tool: string) => spans.filter((s) => s.name === `execute_tool ${tool}`);

describe("MCP calls go through the same pipeline as the agent's", () => {
  test("a direct call is an execute_tool span, ended with its outcome, and not counted as the agent's call", async () => {
    const tracer = recordingTracer();
    const h = await harness({ tools: [echoTool()], tracer });
    const sessionId = mcpSession(h);
    const { callId, answer } = directCall(h, sessionId, "echo", { text: "hi" });
    expect(await answer).toMatchObject({ status: "finished", outcome: "ok" });
    const [span] = toolSpans(tracer.spans, "echo");
    expect(span).toMatchObject({ ended: true, parent: undefined });
    expect(span!.error).toBeUndefined();
    expect(span!.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.call.id": callId,
      "gen_ai.conversation.id": sessionId,
      "agentd.call.via": "mcp",
      "agentd.tool.outcome": "ok",
    });
    // MCP calls have their own family (agentd_mcp_tool_calls_total, from the store).
    expect(renderPrometheus(h.agent.metricFamilies())).not.toContain('agentd_agent_tool_calls_total{tool="echo"');
  });

  test("a direct call with bad arguments is answered at once with the error, and no run is traced", async () => {
    const tracer = recordingTracer();
    const h = await harness({ tools: [echoTool()], tracer });
    const { answer } = directCall(h, mcpSession(h), "echo", { text: 42 });
    const settled = await answer;
    expect(settled).toMatchObject({ status: "finished", outcome: "error" });
    expect(JSON.parse(settled.content!).error.code).toBe("invalid_arguments");
    expect(toolSpans(tracer.spans, "echo")).toEqual([]);
  });

  test("a direct call that waits for a person has an approval-wait span under its tool span, ended by the decision", async () => {
    const tracer = recordingTracer();
    const ran: string[] = [];
    const h = await harness({ tools: [fakeExecTool(ran)], tracer, approvals: { rules: [{ match: `*${GATE}*`, action: "ask" }] } });
    const sessionId = mcpSession(h);
    const { answer } = directCall(h, sessionId, "exec_command", { cmd: `echo ${GATE}` });
    const pending = await waitFor("the approval", () => h.agent.pendingApprovals()[0]);
    const [tool] = toolSpans(tracer.spans, "exec_command");
    const wait = tracer.spans.find((s) => s.name === "agentd.approval.wait");
    expect(wait).toMatchObject({ parent: tool, ended: false, attributes: { "agentd.approval.id": pending.id } });
    expect(tool!.ended).toBe(false);
    h.agent.decideApproval(pending.id, "allow_once", "api", pending.digest);
    expect(await answer).toMatchObject({ status: "finished", outcome: "ok" });
    expect(ran).toEqual([`echo ${GATE}`]);
    expect(wait).toMatchObject({ ended: true, attributes: { "agentd.approval.decision": "allow_once" } });
    expect(tool).toMatchObject({ ended: true, attributes: { "agentd.tool.outcome": "ok", "agentd.call.via": "mcp" } });
    expect(toolSpans(tracer.spans, "exec_command")).toHaveLength(1);
  });

  test("a client that cancels its waiting call ends the wait span and the call's span as cancelled", async () => {
    const tracer = recordingTracer();
    const h = await harness({ tools: [fakeExecTool()], tracer, approvals: { rules: [{ match: `*${GATE}*`, action: "ask" }] } });
    const client = new AbortController();
    const { answer } = directCall(h, mcpSession(h), "exec_command", { cmd: `echo ${GATE}` }, client.signal);
    await waitFor("the approval", () => h.agent.pendingApprovals()[0]);
    client.abort();
    const settled: DirectCallAnswer = await answer;
    expect(settled).toMatchObject({ status: "finished", outcome: "cancelled" });
    expect(tracer.spans.find((s) => s.name === "agentd.approval.wait")).toMatchObject({
      ended: true,
      attributes: { "agentd.approval.decision": "cancelled" },
    });
    expect(toolSpans(tracer.spans, "exec_command")[0]).toMatchObject({ ended: true, error: { type: "cancelled" } });
  });
});

describe("per-session state is let go when a session is idle", () => {
  test("an agent turn's text-check state is dropped when the turn ends", async () => {
    const h = await harness({ tools: [fakeExecTool()] });
    h.upstream.enqueue(
      { kind: "text", toolCalls: [{ name: "exec_command", arguments: '{"cmd":"echo hi > note.sh"}' }] },
      { kind: "text", text: "done" },
    );
    for (let i = 0; i < 3; i++) {
      if (i > 0)
        h.upstream.enqueue(
          { kind: "text", toolCalls: [{ name: "exec_command", arguments: '{"cmd":"ls"}' }] },
          { kind: "text", text: "done" },
        );
      const id = await h.createSession();
      const events = await h.send(id, "write a file");
      expect(events.at(-1)!.data).toMatchObject({ reason: "stop" });
    }
    await waitFor("no session held", () => gauge(h, "agentd_agent_sessions_held") === 0);
  });

  test("what a session wrote still counts after its state was let go: it comes back from the store", async () => {
    const ran: string[] = [];
    const h = await harness({ tools: [fakeExecTool(ran)] });
    const id = await h.createSession();
    h.upstream.enqueue(
      { kind: "text", toolCalls: [{ name: "exec_command", arguments: '{"cmd":"echo id > mine.sh"}' }] },
      { kind: "text", text: "written" },
    );
    await h.send(id, "write it");
    await waitFor("the session let go", () => gauge(h, "agentd_agent_sessions_held") === 0);
    // Running the file it wrote is judged in the sudo scope, which asks.
    h.upstream.enqueue({ kind: "text", toolCalls: [{ name: "exec_command", arguments: '{"cmd":"bash mine.sh"}' }] });
    const events = await h.send(id, "run it");
    expect(events.at(-1)!.event).toBe("approval_required");
    expect(events.at(-1)!.data.approvals[0]).toMatchObject({ scope: "sudo" });
    expect(ran).toEqual(["echo id > mine.sh"]);
  });

  test("an MCP session's state is dropped once its calls are done", async () => {
    const h = await harness({ tools: [fakeExecTool()] });
    const sessionId = mcpSession(h);
    for (const cmd of ["ls", "echo a > b.sh", "pwd"])
      expect(await directCall(h, sessionId, "exec_command", { cmd }).answer).toMatchObject({ outcome: "ok" });
    await waitFor("no session held", () => gauge(h, "agentd_agent_sessions_held") === 0);
  });
});

/** Answers the same thing every time, or a new number each time. */
function statusTool(changing: boolean): ToolDefinition {
  let n = 0;
  return defineTool({
    name: "status",
    description: "Reports a status",
    parameters: z.strictObject({ unit: z.string() }),
    scope: "read",
    timeoutMs: 10_000,
    async execute() {
      n++;
      return changing ? `step ${n}` : "still starting";
    },
  }) as ToolDefinition;
}

const statusCall = (args = '{"unit":"web"}') => ({ kind: "text" as const, toolCalls: [{ name: "status", arguments: args }] });

describe("a turn that repeats a call without progress stops", () => {
  test("the third identical call with the same result ends the turn with a message, and no fourth model step is made", async () => {
    const h = await harness({ tools: [statusTool(false)] });
    // Key order differs: the same arguments all the same.
    h.upstream.enqueue(statusCall(), statusCall('{ "unit": "web" }'), statusCall(), statusCall(), { kind: "text", text: "never" });
    const id = await h.createSession();
    const events = await h.send(id, "wait for web");
    const end = events.at(-1)!;
    expect(end.event).toBe("turn.end");
    expect(end.data).toMatchObject({ reason: "repeated_call", steps: 3, tool: "status" });
    expect(end.data.error).toContain("status");
    expect(end.data.error).toContain("3 times in a row");
    expect(h.upstream.completionRequests()).toHaveLength(3);
    const detail = (await (await h.api(`/api/sessions/${id}`)).json()) as any;
    expect(detail.session.state).toBe("idle");
    expect(detail.turns[0]).toMatchObject({ end_reason: "repeated_call" });
    expect(h.log).toContainEqual(expect.objectContaining({ event: "turn.repeated_call", tool: "status", times: 3 }));
  });

  test("agent.max_repeated_calls sets how many", async () => {
    const h = await harness({ tools: [statusTool(false)], agent: { max_repeated_calls: 2 } });
    h.upstream.enqueue(statusCall(), statusCall(), statusCall());
    const events = await h.send(await h.createSession(), "wait for web");
    expect(events.at(-1)!.data).toMatchObject({ reason: "repeated_call", steps: 2 });
  });

  test("the same call with a new result each time is progress: the turn goes on", async () => {
    const h = await harness({ tools: [statusTool(true)] });
    h.upstream.enqueue(statusCall(), statusCall(), statusCall(), statusCall(), { kind: "text", text: "web is up" });
    const events = await h.send(await h.createSession(), "wait for web");
    expect(events.at(-1)!.data).toMatchObject({ reason: "stop", steps: 5, content: "web is up" });
  });

  test("another call in between breaks the run, and a new turn starts counting afresh", async () => {
    const h = await harness({ tools: [statusTool(false), echoTool()] });
    const echo = { kind: "text" as const, toolCalls: [{ name: "echo", arguments: '{"text":"x"}' }] };
    h.upstream.enqueue(statusCall(), statusCall(), echo, statusCall(), statusCall(), { kind: "text", text: "ok" });
    const id = await h.createSession();
    expect((await h.send(id, "go")).at(-1)!.data).toMatchObject({ reason: "stop", steps: 6 });
    h.upstream.enqueue(statusCall(), { kind: "text", text: "again ok" });
    expect((await h.send(id, "once more")).at(-1)!.data).toMatchObject({ reason: "stop", steps: 2 });
  });
});

describe("records: streamed text is coalesced per step", () => {
  test("a step streamed in 60 chunks is one text.delta row, with the whole text", async () => {
    const h = await harness();
    const chunks = Array.from({ length: 60 }, (_, i) => `w${i} `);
    h.upstream.enqueue({ kind: "text", chunks });
    const id = await h.createSession();
    const events = await h.send(id, "talk");
    expect(events.at(-1)!.data).toMatchObject({ reason: "stop", content: chunks.join("") });
    const rows = h.db.query("SELECT data FROM agent_events WHERE session_id = ? AND type = 'text.delta'").all(id) as Array<{
      data: string;
    }>;
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0]!.data)).toEqual({ step: 1, delta: chunks.join("") });
  });

  test("the batch writes at its size limit and at flush, never an empty event", () => {
    const written: string[] = [];
    const batch = new DeltaBatch((text) => written.push(text), 60_000, 10);
    batch.add("12345");
    batch.add("6789");
    expect(written).toEqual([]);
    batch.add("0ab");
    expect(written).toEqual(["1234567890ab"]);
    batch.flush();
    batch.add("c");
    batch.flush();
    batch.flush();
    expect(written).toEqual(["1234567890ab", "c"]);
  });

  test("a write that fails on the timer fails the step's next call, not the process", async () => {
    const batch = new DeltaBatch(() => {
      throw new Error("store refused");
    }, 1);
    batch.add("x");
    await waitFor("the timer's failure", () => {
      try {
        // Adds nothing and writes nothing itself: only the timer's write can have failed.
        batch.add("");
        return false;
      } catch (error) {
        return (error as Error).message === "store refused";
      }
    });
  });
});

describe("repeatedCall (pure)", () => {
  const ask = (id: string, name: string, args: string) => ({
    role: "assistant",
    content: null,
    tool_calls: [{ id, type: "function", function: { name, arguments: args } }],
  });
  const answer = (id: string, content: string) => ({ role: "tool", tool_call_id: id, content });

  test("counts the trailing run of the same tool, arguments (whatever their key order) and answer", () => {
    const turn = [
      { role: "user", content: "go" },
      ask("a", "status", '{"unit":"web","n":1}'),
      answer("a", "starting"),
      ask("b", "status", '{"n":1,"unit":"web"}'),
      answer("b", "starting"),
    ];
    expect(repeatedCall(turn, 3)).toBeUndefined();
    expect(repeatedCall(turn, 2)).toEqual({ tool: "status", arguments: '{"unit":"web","n":1}', times: 2 });
  });

  test("a different answer, argument or tool in between restarts the count; unanswered calls do not count", () => {
    const turn = [
      ask("a", "status", '{"unit":"web"}'),
      answer("a", "starting"),
      ask("b", "status", '{"unit":"web"}'),
      answer("b", "up"),
      ask("c", "status", '{"unit":"web"}'),
      answer("c", "up"),
      ask("d", "status", '{"unit":"db"}'),
      answer("d", "up"),
      ask("e", "status", '{"unit":"db"}'),
    ];
    expect(repeatedCall(turn, 2)).toBeUndefined();
    expect(repeatedCall(turn.slice(0, 6), 2)).toMatchObject({ times: 2 });
  });

  test("the same call made several times in one step counts each answer", () => {
    const step = {
      role: "assistant",
      content: null,
      tool_calls: ["x", "y", "z"].map((id) => ({ id, type: "function", function: { name: "ls", arguments: "{}" } })),
    };
    expect(repeatedCall([step, answer("x", "a"), answer("y", "a"), answer("z", "a")], 3)).toMatchObject({ tool: "ls", times: 3 });
    expect(repeatedCallMessage({ tool: "ls", arguments: "{}", times: 3 })).toContain("ls {} 3 times in a row");
  });
});
