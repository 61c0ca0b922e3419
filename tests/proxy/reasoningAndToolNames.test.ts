import { describe, expect, test } from "bun:test";
import { ChatStreamToResponses } from "../../src/proxy/translate/chatStreamToResponsesEvents.ts";
import { chatCompletionToResponse } from "../../src/proxy/translate/chatToResponse.ts";
import { ProxyError } from "../../src/proxy/upstream/proxyError.ts";
import { newShell } from "../../src/proxy/translate/responseObject.ts";
import { assertChatToolNames, assertResponsesToolNames } from "../../src/proxy/translate/toolNames.ts";

const chunk = (delta: object, finish: string | null = null) => ({
  id: "c",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

function thrown(fn: () => unknown): ProxyError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ProxyError) return error;
    throw error;
  }
  throw new Error("expected a ProxyError");
}

describe("chat reasoning → Responses reasoning items", () => {
  test("stream: reasoning_content deltas make a reasoning item before the message", () => {
    const t = new ChatStreamToResponses(newShell({ model: "m" }));
    const events = [
      ...t.start(),
      ...t.push(chunk({ role: "assistant", reasoning_content: "think" })),
      ...t.push(chunk({ reasoning_content: "ing" })),
      ...t.push(chunk({ content: "answer" })),
      ...t.push(chunk({}, "stop")),
    ];
    const end = t.finish();
    const all = [...events, ...end.events];
    expect(all.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    const reasoningDone = all.find((e) => e.type === "response.reasoning_text.done")!;
    expect(reasoningDone).toMatchObject({ output_index: 0, content_index: 0, text: "thinking" });
    expect(all.find((e) => e.type === "response.output_text.delta")).toMatchObject({ output_index: 1 });
    const output = end.response.output as any[];
    expect(output[0]).toMatchObject({
      type: "reasoning",
      summary: [],
      content: [{ type: "reasoning_text", text: "thinking" }],
      status: "completed",
    });
    expect(output[0].id).toStartWith("rs_");
    expect(output[1]).toMatchObject({ type: "message", content: [{ type: "output_text", text: "answer" }] });
  });

  test("stream: OpenRouter's `reasoning` field, then a tool call, closes the reasoning item first", () => {
    const t = new ChatStreamToResponses(newShell({ model: "m" }));
    t.start();
    const events = [
      ...t.push(chunk({ reasoning: "plan" })),
      ...t.push(chunk({ tool_calls: [{ index: 0, id: "call_1", function: { name: "f", arguments: "{}" } }] })),
    ];
    expect(events.map((e) => e.type)).toEqual([
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
    ]);
    const failed = t.fail("upstream_error", "cut")[0]!;
    expect((failed.response as any).output.map((item: any) => [item.type, item.status])).toEqual([
      ["reasoning", "completed"],
      ["function_call", "incomplete"],
    ]);
  });

  test("whole completion: reasoning_content (or reasoning) becomes the first output item", () => {
    for (const field of ["reasoning_content", "reasoning"]) {
      const response = chatCompletionToResponse(
        { choices: [{ message: { content: "42", [field]: "because" }, finish_reason: "stop" }] },
        newShell({ model: "m" }),
      );
      expect((response.output as any[]).map((item) => item.type)).toEqual(["reasoning", "message"]);
      expect((response.output as any[])[0].content).toEqual([{ type: "reasoning_text", text: "because" }]);
    }
  });
});

describe("tool names", () => {
  test("an empty or ill-formed function name is a 400 naming the tool", () => {
    const empty = thrown(() =>
      assertChatToolNames([
        { type: "function", function: { name: "ok_1" } },
        { type: "function", function: { name: "" } },
      ]),
    );
    expect(empty).toMatchObject({ code: "invalid_request", status: 400, param: "tools[1].function.name" });
    expect(empty.message).toContain("tools[1]");
    expect(thrown(() => assertChatToolNames([{ type: "function", function: {} }])).param).toBe("tools[0].function.name");
    const dotted = thrown(() => assertResponsesToolNames([{ type: "web_search" }, { type: "function", name: "mcp.read file" }]));
    expect(dotted).toMatchObject({ param: "tools[1].name" });
    expect(dotted.message).toContain('"mcp.read file"');
  });

  test("valid names, built-in tools and absent tools pass", () => {
    expect(() => assertChatToolNames([{ type: "function", function: { name: "exec_command-2" } }])).not.toThrow();
    expect(() => assertChatToolNames(undefined)).not.toThrow();
    expect(() => assertResponsesToolNames([{ type: "web_search" }, { type: "function", name: "A_b-9" }])).not.toThrow();
  });
});
