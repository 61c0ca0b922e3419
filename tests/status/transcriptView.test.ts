import { describe, expect, test } from "bun:test";
import type { ApprovalView, SessionTranscript, ToolCallRecord } from "../../src/agent/index.ts";
import { tail, transcriptEntries } from "../../src/status/transcriptView.ts";

const call = (over: Partial<ToolCallRecord>): ToolCallRecord => ({
  id: "tc_1",
  session_id: "s_1",
  turn_id: "t_1",
  step: 1,
  ordinal: 0,
  call_id: "c1",
  tool: "exec_command",
  scope: "exec",
  arguments: { cmd: "make" },
  status: "finished",
  outcome: "ok",
  approval_id: null,
  created_at: 2000,
  started_at: 2000,
  ended_at: 2400,
  duration_ms: 400,
  output_bytes: 10,
  error_code: null,
  error_message: null,
  ...over,
});

function transcript(over: Partial<SessionTranscript> = {}): SessionTranscript {
  return {
    session: {
      id: "s_1",
      created_at: 1000,
      updated_at: 3000,
      model: "m",
      target: "local",
      policy: {},
      title: "build it",
      state: "idle",
      kind: "agent",
      client: null,
    },
    messages: [
      { id: 1, turn_id: "t_1", role: "system", body: { role: "system", content: "you are" }, ts: 1000 },
      { id: 2, turn_id: "t_1", role: "user", body: { role: "user", content: "build it" }, ts: 1000 },
      {
        id: 3,
        turn_id: "t_1",
        role: "assistant",
        body: { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "exec_command" } }] },
        ts: 1900,
      },
      {
        id: 4,
        turn_id: "t_1",
        role: "tool",
        body: {
          role: "tool",
          tool_call_id: "c1",
          content: JSON.stringify({ output: "compiling\nerror: sk-abcdefghijklmnopqrstuvwxyz012345 leaked", exit_code: 2 }),
        },
        ts: 2400,
      },
      { id: 5, turn_id: "t_1", role: "assistant", body: { role: "assistant", content: "it failed" }, ts: 2500 },
    ],
    tool_calls: [call({})],
    approvals: [{ id: "ap_1", tool_call_id: "tc_1", status: "allow_once", decided_by: "page", decided_at: 1950 } as ApprovalView],
    ...over,
  };
}

describe("transcriptEntries", () => {
  test("messages in order, the tool call under the message that asked, with exit code, output tail and approval", () => {
    const entries = transcriptEntries(transcript());
    expect(entries.map((e) => (e.type === "message" ? `${e.role}:${e.text}` : `call:${e.detail.call.tool}`))).toEqual([
      "user:build it",
      "call:exec_command",
      "assistant:it failed",
    ]);
    const detail = entries[1]!.type === "tool_call" ? entries[1]!.detail : undefined;
    expect(detail?.exit_code).toBe(2);
    expect(detail?.output_tail).toStartWith("compiling\nerror: ");
    expect(detail?.output_tail).not.toContain("sk-abcdefghijklmnopqrstuvwxyz012345");
    expect(detail?.approvals.map((a) => `${a.status} by ${a.decided_by}`)).toEqual(["allow_once by page"]);
  });

  test("an MCP client's direct call, named by no message, is still listed; plain-text output has no exit code", () => {
    const entries = transcriptEntries(
      transcript({
        messages: [{ id: 1, turn_id: "t_2", role: "tool", body: { role: "tool", tool_call_id: "m1", content: "plain text" }, ts: 1 }],
        tool_calls: [call({ id: "tc_9", call_id: "m1", turn_id: "t_2", tool: "read_file" })],
        approvals: [],
      }),
    );
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ type: "tool_call", detail: { output_tail: "plain text", exit_code: null } });
  });

  test("the tail keeps the last lines", () => {
    const long = Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\n");
    expect(tail(long).split("\n").at(-1)).toBe("line 49");
    expect(tail(long)).toStartWith("…\nline 30");
  });
});
