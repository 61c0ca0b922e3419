import { describe, expect, test } from "bun:test";
import { chatCompletionToResponse } from "../../src/proxy/translate/chatToResponse.ts";
import { ChatStreamToResponses } from "../../src/proxy/translate/chatStreamToResponsesEvents.ts";
import { newShell } from "../../src/proxy/translate/responseObject.ts";
import { responsesToChat } from "../../src/proxy/translate/responsesToChat.ts";
import { ProxyError } from "../../src/proxy/upstream/proxyError.ts";

const chunk = (delta: object, finish: string | null = null) => ({
  id: "c",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe("Responses request → Chat request", () => {
  test("json_schema text format, tool choice and history", () => {
    const chat = responsesToChat(
      {
        model: "m",
        input: [{ type: "function_call_output", call_id: "c1", output: [{ type: "input_text", text: "done" }] }],
        text: { format: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true } },
        tools: [{ type: "function", name: "f", parameters: { type: "object" } }],
        tool_choice: "required",
        include: ["reasoning.encrypted_content"],
        store: false,
      },
      [
        { role: "user", content: "go" },
        { type: "reasoning", id: "rs_1", summary: [] },
        { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      ],
    );
    expect(chat).toEqual({
      model: "m",
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "done" },
      ],
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
      tool_choice: "required",
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } },
      store: false,
    });
  });

  test("images pass as image_url parts; unsupported items name themselves", () => {
    const chat = responsesToChat({
      model: "m",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "what is this?" },
            { type: "input_image", image_url: "data:image/png;base64,AA", detail: "low" },
          ],
        },
      ],
    });
    expect((chat.messages as unknown[])[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "what is this?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,AA", detail: "low" } },
      ],
    });
    const error = (() => {
      try {
        responsesToChat({ model: "m", input: [{ type: "conversation_summary", id: "x" }] });
      } catch (e) {
        return e as ProxyError;
      }
    })();
    expect(error).toBeInstanceOf(ProxyError);
    expect(error!.code).toBe("unsupported_parameter");
    expect(error!.param).toBe("input[0].type");
  });
});

describe("Chat answer → Response", () => {
  test("length finish is an incomplete response", () => {
    const response = chatCompletionToResponse(
      { choices: [{ message: { content: "trunc" }, finish_reason: "length" }], usage: { prompt_tokens: 1, completion_tokens: 2 } },
      newShell({ model: "m" }),
    );
    expect(response).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
    });
  });

  test("stream: text then parallel tool calls make ordered items with consistent indices", () => {
    const translator = new ChatStreamToResponses(newShell({ model: "m" }));
    const events = [
      ...translator.start(),
      ...translator.push(chunk({ role: "assistant", content: "Let me look." })),
      ...translator.push(chunk({ tool_calls: [{ index: 0, id: "a", function: { name: "f", arguments: '{"x"' } }] })),
      ...translator.push(chunk({ tool_calls: [{ index: 1, id: "b", function: { name: "g", arguments: "{}" } }] })),
      ...translator.push(chunk({ tool_calls: [{ index: 0, function: { arguments: ":1}" } }] })),
      ...translator.push(chunk({}, "tool_calls")),
      ...translator.push({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } }),
    ];
    const end = translator.finish();
    const all = [...events, ...end.events];
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    expect(all.map((e) => `${e.type}${e.output_index === undefined ? "" : `@${e.output_index}`}`)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added@0",
      "response.content_part.added@0",
      "response.output_text.delta@0",
      "response.output_text.done@0",
      "response.content_part.done@0",
      "response.output_item.done@0",
      "response.output_item.added@1",
      "response.function_call_arguments.delta@1",
      "response.function_call_arguments.delta@1",
      "response.function_call_arguments.done@1",
      "response.output_item.done@1",
      "response.output_item.added@2",
      "response.function_call_arguments.delta@2",
      "response.function_call_arguments.done@2",
      "response.output_item.done@2",
      "response.completed",
    ]);
    expect(end.response.output).toEqual([
      expect.objectContaining({ type: "message", content: [expect.objectContaining({ text: "Let me look." })] }),
      expect.objectContaining({ type: "function_call", call_id: "a", name: "f", arguments: '{"x":1}' }),
      expect.objectContaining({ type: "function_call", call_id: "b", name: "g", arguments: "{}" }),
    ]);
    expect(end.response.usage).toMatchObject({ input_tokens: 3, output_tokens: 4 });
  });
});
