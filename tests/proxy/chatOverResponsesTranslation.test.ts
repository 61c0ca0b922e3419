import { describe, expect, test } from "bun:test";
import { chatToResponsesRequest } from "../../src/proxy/translate/chatToResponsesRequest.ts";
import { ProxyError } from "../../src/proxy/upstream/proxyError.ts";
import { responseToChatCompletion } from "../../src/proxy/translate/responseToChatCompletion.ts";
import { ResponsesStreamToChat } from "../../src/proxy/translate/responsesStreamToChatChunks.ts";

function thrown(fn: () => unknown): ProxyError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ProxyError) return error;
    throw error;
  }
  throw new Error("expected a ProxyError");
}

describe("Chat request → Responses request", () => {
  test("messages, tool calls and their outputs, tools and settings", () => {
    const request = chatToResponsesRequest({
      model: "m",
      messages: [
        { role: "system", content: "be brief" },
        { role: "developer", content: [{ type: "text", text: "use tools" }] },
        {
          role: "user",
          content: [
            { type: "text", text: "what is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AA", detail: "low" } },
          ],
        },
        {
          role: "assistant",
          content: "checking",
          tool_calls: [
            { id: "c1", type: "function", function: { name: "look", arguments: '{"a":1}' } },
            { id: "c2", type: "function", function: { name: "look", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: "a cat" },
        { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "a hat" }] },
        { role: "system", content: "late rule" },
      ],
      tools: [
        { type: "function", function: { name: "look", description: "looks", parameters: { type: "object" } } },
        { type: "function", function: { name: "strict_one", strict: true } },
      ],
      tool_choice: { type: "function", function: { name: "look" } },
      max_tokens: 50,
      max_completion_tokens: 100,
      temperature: 0.2,
      reasoning_effort: "low",
      response_format: { type: "json_schema", json_schema: { name: "out", schema: { type: "object" }, strict: true } },
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(request).toEqual({
      model: "m",
      instructions: "be brief\n\nuse tools",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "what is this?" },
            { type: "input_image", image_url: "data:image/png;base64,AA", detail: "low" },
          ],
        },
        { role: "assistant", content: "checking" },
        { type: "function_call", call_id: "c1", name: "look", arguments: '{"a":1}' },
        { type: "function_call", call_id: "c2", name: "look", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "a cat" },
        { type: "function_call_output", call_id: "c2", output: "a hat" },
        { role: "system", content: "late rule" },
      ],
      tools: [
        { type: "function", name: "look", description: "looks", parameters: { type: "object" }, strict: false },
        { type: "function", name: "strict_one", strict: true },
      ],
      tool_choice: { type: "function", name: "look" },
      max_output_tokens: 100,
      temperature: 0.2,
      reasoning: { effort: "low" },
      text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } },
      store: false,
      stream: true,
    });
  });

  test("max_tokens alone is the output limit; no tools means no tool_choice; neutral values and nulls are accepted", () => {
    const request = chatToResponsesRequest({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 7,
      tool_choice: "auto",
      n: 1,
      logprobs: false,
      presence_penalty: 0,
      seed: null,
    });
    expect(request).toEqual({ model: "m", input: [{ role: "user", content: "hi" }], max_output_tokens: 7, store: false });
  });

  test("what would change the answer's shape is a 400 naming it", () => {
    expect(thrown(() => chatToResponsesRequest({ model: "m", messages: [], n: 2 }))).toMatchObject({
      code: "unsupported_parameter",
      status: 400,
      param: "n",
    });
    expect(thrown(() => chatToResponsesRequest({ model: "m", messages: [{ role: "function", name: "f", content: "x" }] }))).toMatchObject({
      param: "messages[0].role",
    });
    expect(thrown(() => chatToResponsesRequest({ model: "m", messages: [{ role: "tool", content: "x" }] }))).toMatchObject({
      code: "invalid_request",
      param: "messages[0].tool_call_id",
    });
    expect(
      thrown(() =>
        chatToResponsesRequest({ model: "m", messages: [{ role: "user", content: [{ type: "input_audio", input_audio: {} }] }] }),
      ),
    ).toMatchObject({ param: "messages[0].content[0].type" });
  });
});

describe("Responses answer → Chat completion", () => {
  test("text, reasoning and tool calls; usage renamed", () => {
    const completion = responseToChatCompletion(
      {
        id: "resp_1",
        created_at: 123,
        model: "m-up",
        status: "completed",
        output: [
          {
            type: "reasoning",
            id: "rs_1",
            summary: [{ type: "summary_text", text: "short" }],
            content: [{ type: "reasoning_text", text: "long thought" }],
          },
          {
            type: "message",
            role: "assistant",
            content: [
              { type: "output_text", text: "Hel" },
              { type: "output_text", text: "lo" },
            ],
          },
          { type: "function_call", id: "fc_1", call_id: "call_1", name: "f", arguments: '{"x":1}' },
        ],
        usage: { input_tokens: 4, output_tokens: 6, total_tokens: 10, output_tokens_details: { reasoning_tokens: 2 } },
      },
      "m",
    );
    expect(completion).toEqual({
      id: "chatcmpl-resp_1",
      object: "chat.completion",
      created: 123,
      model: "m-up",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "Hello",
            refusal: null,
            reasoning_content: "long thought",
            tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: '{"x":1}' } }],
          },
          logprobs: null,
          finish_reason: "tool_calls",
        },
      ],
      usage: {
        prompt_tokens: 4,
        completion_tokens: 6,
        total_tokens: 10,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 2 },
      },
    });
  });

  test("an incomplete response finishes on length (or content_filter)", () => {
    const output = [{ type: "message", content: [{ type: "output_text", text: "trunc" }] }];
    expect(
      (
        responseToChatCompletion({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output }, "m").choices as any
      )[0].finish_reason,
    ).toBe("length");
    expect(
      (responseToChatCompletion({ status: "incomplete", incomplete_details: { reason: "content_filter" }, output }, "m").choices as any)[0]
        .finish_reason,
    ).toBe("content_filter");
  });
});

describe("Responses events → chat chunks", () => {
  const created = { type: "response.created", response: { id: "resp_9", created_at: 5, model: "m", status: "in_progress", output: [] } };
  const completed = (status = "completed") => ({
    type: `response.${status}`,
    response: { status, usage: { input_tokens: 3, output_tokens: 4 } },
  });
  const deltas = (chunks: Record<string, any>[]) => chunks.map((c) => c.choices?.[0]?.delta);

  test("text, then two calls numbered in order, finish tool_calls, usage when asked", () => {
    const t = new ResponsesStreamToChat("m", true);
    const out = [
      created,
      { type: "response.output_item.added", output_index: 0, item: { type: "message", id: "msg", content: [] } },
      { type: "response.output_text.delta", output_index: 0, delta: "Hi" },
      {
        type: "response.output_item.added",
        output_index: 1,
        item: { type: "function_call", id: "fc_a", call_id: "call_a", name: "f", arguments: "" },
      },
      {
        type: "response.output_item.added",
        output_index: 2,
        item: { type: "function_call", id: "fc_b", call_id: "call_b", name: "g", arguments: "" },
      },
      { type: "response.function_call_arguments.delta", output_index: 2, delta: '{"b"' },
      { type: "response.function_call_arguments.delta", output_index: 1, delta: '{"a":1}' },
      { type: "response.function_call_arguments.delta", output_index: 2, delta: ":2}" },
      { type: "response.function_call_arguments.done", output_index: 1, arguments: '{"a":1}' },
      {
        type: "response.output_item.done",
        output_index: 1,
        item: { type: "function_call", call_id: "call_a", name: "f", arguments: '{"a":1}' },
      },
    ].flatMap((event) => {
      const step = t.push(event);
      expect(step.end).toBe(false);
      return step.chunks;
    });
    expect(out[0]).toMatchObject({ id: "chatcmpl-resp_9", object: "chat.completion.chunk", created: 5, model: "m" });
    expect(deltas(out)).toEqual([
      { role: "assistant", content: "" },
      { content: "Hi" },
      { tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "f", arguments: "" } }] },
      { tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "g", arguments: "" } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{"b"' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] },
      { tool_calls: [{ index: 1, function: { arguments: ":2}" } }] },
    ]);
    const end = t.push(completed());
    expect(end.end).toBe(true);
    expect(end.chunks[0]!.choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: "tool_calls" }]);
    expect(end.chunks[1]).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    expect(t.usage()).toMatchObject({ prompt_tokens: 3, completion_tokens: 4 });
  });

  test("no usage chunk unless asked; incomplete finishes on length; reasoning streams as reasoning_content", () => {
    const t = new ResponsesStreamToChat("m", false);
    const chunks = [
      created,
      { type: "response.reasoning_text.delta", output_index: 0, delta: "hmm" },
      { type: "response.reasoning_summary_text.delta", output_index: 0, delta: "summary" },
      completed("incomplete"),
    ].flatMap((e) => t.push(e).chunks);
    expect(deltas(chunks)).toEqual([{ role: "assistant", content: "" }, { reasoning_content: "hmm" }, {}]);
    expect((chunks.at(-1) as any).choices[0].finish_reason).toBe("length");
  });

  test("items that arrive whole (no deltas) still reach the client", () => {
    const t = new ResponsesStreamToChat("m", false);
    const chunks = [
      created,
      { type: "response.output_item.done", output_index: 0, item: { type: "message", content: [{ type: "output_text", text: "whole" }] } },
      { type: "response.output_item.added", output_index: 1, item: { type: "function_call", call_id: "c", name: "f", arguments: "" } },
      { type: "response.output_item.done", output_index: 1, item: { type: "function_call", call_id: "c", name: "f", arguments: "{}" } },
      {
        type: "response.output_item.done",
        output_index: 2,
        item: { type: "function_call", call_id: "d", name: "g", arguments: '{"z":0}' },
      },
    ].flatMap((e) => t.push(e).chunks);
    expect(deltas(chunks).slice(1)).toEqual([
      { content: "whole" },
      { tool_calls: [{ index: 0, id: "c", type: "function", function: { name: "f", arguments: "" } }] },
      { tool_calls: [{ index: 0, function: { arguments: "{}" } }] },
      { tool_calls: [{ index: 1, id: "d", type: "function", function: { name: "g", arguments: '{"z":0}' } }] },
    ]);
  });
});
