import { describe, expect, test } from "bun:test";
import { SocketConversation, socketErrorEvent } from "../../src/proxy/routes/socketConversation.ts";
import { ProxyError } from "../../src/proxy/index.ts";

const frame = (fields: Record<string, unknown>) => JSON.stringify({ type: "response.create", model: "gpt-x", ...fields });
const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });

describe("SocketConversation: frames of the Responses WebSocket", () => {
  test("a response.create frame is a streamed request without the socket's envelope fields", () => {
    const step = new SocketConversation().step(
      frame({ input: [user("hi")], store: false, generate: true, client_metadata: { turn_id: "t" } }),
    );
    expect(step).toEqual({ kind: "create", body: { model: "gpt-x", input: [user("hi")], store: false, stream: true } });
  });

  test("generate: false is answered at once: created then completed, no output, and it can be continued", () => {
    const conversation = new SocketConversation();
    const step = conversation.step(frame({ input: [user("system prompt")], generate: false }));
    if (step.kind !== "prewarm") throw new Error("expected a prewarm");
    expect(step.events.map((e) => e.type)).toEqual(["response.created", "response.completed"]);
    const completed = step.events[1]!.response as { id: string; status: string; output: unknown[] };
    expect(completed).toMatchObject({ status: "completed", output: [], model: "gpt-x" });
    const next = conversation.step(frame({ previous_response_id: completed.id, input: [user("hi")] }));
    expect(next).toEqual({ kind: "create", body: { model: "gpt-x", input: [user("system prompt"), user("hi")], stream: true } });
  });

  test("previous_response_id of the connection's last completed response expands to the whole conversation", () => {
    const conversation = new SocketConversation();
    const first = conversation.step(frame({ input: [user("run ls")] }));
    if (first.kind !== "create") throw new Error("expected a request");
    const call = { type: "function_call", call_id: "call_1", name: "exec_command", arguments: "{}" };
    conversation.settled(first.body, { id: "resp_1", status: "completed", output: [call] });
    const output = { type: "function_call_output", call_id: "call_1", output: "a.txt" };
    const second = conversation.step(frame({ previous_response_id: "resp_1", input: [output] }));
    if (second.kind !== "create") throw new Error("expected a request");
    expect(second.body.input).toEqual([user("run ls"), call, output]);
    expect(second.body.previous_response_id).toBeUndefined();
  });

  test("an id the connection does not hold is left for the response store; a failed response is not continued", () => {
    const conversation = new SocketConversation();
    const first = conversation.step(frame({ input: "hi" }));
    if (first.kind !== "create") throw new Error("expected a request");
    expect(first.body.input).toEqual([{ role: "user", content: "hi" }]);
    conversation.settled(first.body, { id: "resp_failed", status: "failed", output: [] });
    const next = conversation.step(frame({ previous_response_id: "resp_failed", input: [] }));
    expect(next).toMatchObject({ kind: "create", body: { previous_response_id: "resp_failed", input: [] } });
    // A request that continued a stored response holds only its new items: it is not continued from here either.
    if (next.kind !== "create") throw new Error("expected a request");
    conversation.settled(next.body, { id: "resp_2", status: "completed", output: [] });
    expect(conversation.step(frame({ previous_response_id: "resp_2", input: [] }))).toMatchObject({
      body: { previous_response_id: "resp_2" },
    });
  });

  test("hostile frames are refused with a clear error, never a crash", () => {
    const conversation = new SocketConversation();
    const refused = (text: string) => {
      try {
        conversation.step(text);
      } catch (error) {
        expect(error).toBeInstanceOf(ProxyError);
        return (error as ProxyError).message;
      }
      throw new Error(`accepted: ${text}`);
    };
    expect(refused("not json")).toContain("JSON object");
    expect(refused("[1,2]")).toContain("JSON object");
    expect(refused("null")).toContain("JSON object");
    expect(refused(JSON.stringify({ type: "response.cancel" }))).toContain("'response.cancel'");
    expect(refused(frame({ input: 42 }))).toContain("'input'");
    expect(refused(frame({ model: "", input: [], generate: false }))).toContain("'model'");
  });
});

describe("socketErrorEvent: an HTTP error as the socket's error event", () => {
  test("status, OpenAI error body and the headers a client acts on", () => {
    const body = JSON.stringify({ error: { message: "slow down", type: "rate_limit_error", code: "rate_limit_exceeded", param: null } });
    const headers = new Headers({ "retry-after": "2", "x-request-id": "req_1", "content-type": "application/json" });
    expect(socketErrorEvent(429, body, headers)).toEqual({
      type: "error",
      status: 429,
      error: { message: "slow down", type: "rate_limit_error", code: "rate_limit_exceeded", param: null },
      headers: { "retry-after": "2", "x-request-id": "req_1" },
    });
  });

  test("a body that is not OpenAI's error shape still gives a message", () => {
    expect(socketErrorEvent(502, "Bad Gateway", new Headers())).toMatchObject({
      status: 502,
      error: { message: "Bad Gateway" },
      headers: {},
    });
  });
});
