import { describe, expect, test } from "bun:test";
import { directCallAnswer } from "../../src/agent/directCallAnswer.ts";
import type { DirectCallAnswer, DirectCallRequest } from "../../src/agent/directCallTypes.ts";
import { CallWaiters } from "../../src/agent/directCallWaiters.ts";
import type { StoredMessage } from "../../src/agent/sessionStore.ts";
import type { ToolCallRecord } from "../../src/agent/toolCallStore.ts";

const request: DirectCallRequest = {
  sessionId: "s1",
  tool: "exec_command",
  args: { cmd: "id" },
  signal: new AbortController().signal,
  progress: () => {},
};

function answer(status: DirectCallAnswer["status"], content?: string): DirectCallAnswer {
  return {
    call_id: "mcp-1",
    tool: "exec_command",
    status,
    outcome: status === "finished" ? "ok" : null,
    approval_id: null,
    ...(content ? { content } : {}),
  };
}

describe("CallWaiters", () => {
  test("the caller's own promise gets the answer; a finished answer ends the wait, an earlier one does not", async () => {
    const waiters = new CallWaiters();
    const own = waiters.add("turn-1", request);
    const waiter = waiters.get("turn-1")!;
    expect(waiter.request).toBe(request);
    waiters.notify("turn-1", answer("awaiting_approval"), waiter);
    expect(await own).toEqual(answer("awaiting_approval"));
    expect(waiters.get("turn-1")).toBe(waiter);
    waiters.notify("turn-1", answer("finished", "uid=0"), waiter);
    expect(waiters.get("turn-1")).toBeUndefined();
    expect([...waiters.entries()]).toEqual([]);
  });

  test("a result asked for by id gets the next answer told, and stops listening once it has it", async () => {
    const waiters = new CallWaiters();
    void waiters.add("turn-1", request);
    const waiter = waiters.get("turn-1")!;
    const next = waiters.next(waiter, 60_000, () => answer("running"));
    expect(waiter.listeners.size).toBe(2);
    waiters.notify("turn-1", answer("finished", "done"), waiter);
    expect(await next).toEqual(answer("finished", "done"));
    expect(waiter.listeners.size).toBe(1);
  });

  test("when nothing is told within the wait, the call is answered as it stands then", async () => {
    const waiters = new CallWaiters();
    void waiters.add("turn-1", request);
    const waiter = waiters.get("turn-1")!;
    let asked = 0;
    const standing = await waiters.next(waiter, 1, () => {
      asked++;
      return answer("awaiting_approval");
    });
    expect(standing).toEqual(answer("awaiting_approval"));
    expect(asked).toBe(1);
    expect(waiter.listeners.size).toBe(1);
  });
});

function record(status: ToolCallRecord["status"]): ToolCallRecord {
  return {
    id: "r1",
    session_id: "s1",
    turn_id: "turn-1",
    step: 1,
    ordinal: 0,
    call_id: "mcp-1",
    tool: "exec_command",
    scope: "exec",
    arguments: {},
    status,
    outcome: status === "finished" ? "error" : null,
    approval_id: status === "planned" ? null : "ap-1",
    created_at: 0,
    started_at: null,
    ended_at: null,
    duration_ms: null,
    output_bytes: null,
    error_code: null,
    error_message: null,
  };
}

function message(id: number, body: StoredMessage["body"]): StoredMessage {
  return { id, turn_id: "turn-1", role: body.role, body, ts: 0 };
}

describe("directCallAnswer", () => {
  test("a finished call carries its own tool message's content, not another call's", () => {
    const messages = [
      message(1, { role: "assistant", content: null }),
      message(2, { role: "tool", tool_call_id: "other", content: "not this one" }),
      message(3, { role: "tool", tool_call_id: "mcp-1", content: '{"error":"boom"}' }),
    ];
    expect(directCallAnswer(record("finished"), () => messages)).toEqual({
      call_id: "mcp-1",
      tool: "exec_command",
      status: "finished",
      outcome: "error",
      content: '{"error":"boom"}',
      approval_id: "ap-1",
    });
  });

  test("an unfinished call has no content, and the turn's messages are not read for it", () => {
    const answered = directCallAnswer(record("awaiting_approval"), () => {
      throw new Error("read the messages of an unfinished call");
    });
    expect(answered).toEqual({ call_id: "mcp-1", tool: "exec_command", status: "awaiting_approval", outcome: null, approval_id: "ap-1" });
  });

  test("a finished call whose tool message is missing is answered without content", () => {
    expect(directCallAnswer(record("finished"), () => [])).not.toHaveProperty("content");
  });
});
