import { describe, expect, test } from "bun:test";
import { chatCompletionToResponse } from "../../src/proxy/translate/chatToResponse.ts";
import { resolveItemReferences } from "../../src/proxy/translate/itemReferences.ts";
import { newShell } from "../../src/proxy/translate/responseObject.ts";
import { responsesToChat } from "../../src/proxy/translate/responsesToChat.ts";
import { flatName, toolNamesOf } from "../../src/proxy/translate/responsesTools.ts";
import { ProxyError } from "../../src/proxy/upstream/proxyError.ts";

function thrown(fn: () => unknown): ProxyError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ProxyError) return error;
    throw error;
  }
  throw new Error("expected a ProxyError");
}

const namespaceTool = {
  type: "namespace",
  name: "multi_agent_v1",
  description: "Sub-agents.",
  tools: [
    {
      type: "function",
      name: "spawn",
      description: "Starts one.",
      parameters: { type: "object", properties: { task: { type: "string" } } },
    },
    { type: "custom", name: "note", description: "Free text." },
  ],
};
const customTool = {
  type: "custom",
  name: "apply_patch",
  description: "Applies a patch.",
  format: { type: "grammar", syntax: "lark", definition: "start: /.+/" },
};

describe("Responses request → Chat request: degrade and report", () => {
  test("a Codex-like request is translated, and what has no chat form is dropped and named", () => {
    const dropped: string[] = [];
    const chat = responsesToChat(
      {
        model: "m",
        input: [{ role: "user", content: "hi" }],
        client_metadata: { session: "x" },
        max_tool_calls: 3,
        include: ["reasoning.encrypted_content"],
        truncation: "disabled",
        background: false,
        prompt_cache_key: "k",
        metadata: { a: "b" },
        safety_identifier: "u1",
        store: false,
        text: { verbosity: "low" },
        tools: [{ type: "function", name: "shell", parameters: { type: "object" } }, { type: "web_search" }, { type: "local_shell" }],
        parallel_tool_calls: true,
        stream: true,
      },
      [{ type: "reasoning", id: "rs_1", summary: [] }],
      dropped,
    );
    expect(dropped).toEqual(["client_metadata", "max_tool_calls", "input.reasoning", "tools.web_search", "tools.local_shell", "include"]);
    expect(chat).toEqual({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      tools: [{ type: "function", function: { name: "shell", parameters: { type: "object" } } }],
      parallel_tool_calls: true,
      store: false,
      metadata: { a: "b" },
      prompt_cache_key: "k",
      safety_identifier: "u1",
      verbosity: "low",
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  test("top_logprobs and the logprobs include map to chat logprobs", () => {
    const dropped: string[] = [];
    const chat = responsesToChat({ model: "m", input: "x", top_logprobs: 2, include: ["message.output_text.logprobs"] }, [], dropped);
    expect(chat).toMatchObject({ logprobs: true, top_logprobs: 2 });
    expect(dropped).toEqual([]);
    expect(responsesToChat({ model: "m", input: "x", include: ["message.output_text.logprobs"] })).toMatchObject({ logprobs: true });
  });

  test("namespace tools flatten into functions with reversible names; custom tools take one string", () => {
    const chat = responsesToChat({ model: "m", input: "x", tools: [namespaceTool, customTool] });
    const tools = chat.tools as { function: { name: string; description?: string; parameters?: any } }[];
    expect(tools.map((t) => t.function.name)).toEqual(["multi_agent_v1__spawn", "multi_agent_v1__note", "apply_patch"]);
    expect(tools[0]!.function.description).toBe("Sub-agents.\n\nStarts one.");
    expect(tools[2]!.function.parameters).toMatchObject({ type: "object", required: ["input"], properties: { input: { type: "string" } } });
    expect(tools[2]!.function.parameters.properties.input.description).toContain("start: /.+/");
    const names = toolNamesOf([namespaceTool, customTool]);
    expect(names.get("multi_agent_v1__spawn")).toEqual({ name: "spawn", namespace: "multi_agent_v1", custom: false });
    expect(names.get("apply_patch")).toEqual({ name: "apply_patch", namespace: undefined, custom: true });
    const long = flatName("n".repeat(40), "f".repeat(40));
    expect(long.length).toBe(64);
    expect(
      toolNamesOf([{ type: "namespace", name: "n".repeat(40), tools: [{ type: "function", name: "f".repeat(40) }] }]).get(long),
    ).toEqual({
      name: "f".repeat(40),
      namespace: "n".repeat(40),
      custom: false,
    });
  });

  test("chat tool calls come back as the namespaced function_call and the custom_tool_call the client declared", () => {
    const request = { model: "m", input: "x", tools: [namespaceTool, customTool] };
    const response = chatCompletionToResponse(
      {
        choices: [
          {
            message: {
              content: null,
              tool_calls: [
                { id: "c1", function: { name: "multi_agent_v1__spawn", arguments: '{"task":"t"}' } },
                { id: "c2", function: { name: "apply_patch", arguments: '{"input":"*** Begin Patch"}' } },
              ],
            },
            finish_reason: "tool_calls",
          },
        ],
      },
      newShell(request),
    );
    expect(response.output).toEqual([
      {
        type: "function_call",
        id: "fc_c1",
        call_id: "c1",
        name: "spawn",
        namespace: "multi_agent_v1",
        arguments: '{"task":"t"}',
        status: "completed",
      },
      { type: "custom_tool_call", id: "ctc_c2", call_id: "c2", name: "apply_patch", input: "*** Begin Patch", status: "completed" },
    ]);
  });

  test("history: namespaced and custom calls and their outputs go back under the chat names", () => {
    const chat = responsesToChat({
      model: "m",
      input: [
        { type: "function_call", call_id: "c1", name: "spawn", namespace: "multi_agent_v1", arguments: "{}" },
        { type: "custom_tool_call", call_id: "c2", name: "apply_patch", input: "patch" },
        { type: "function_call_output", call_id: "c1", output: "ok" },
        { type: "custom_tool_call_output", call_id: "c2", output: "done" },
        { type: "web_search_call", id: "ws_1", status: "completed" },
      ],
    });
    expect(chat.messages).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "multi_agent_v1__spawn", arguments: "{}" } },
          { id: "c2", type: "function", function: { name: "apply_patch", arguments: '{"input":"patch"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "ok" },
      { role: "tool", tool_call_id: "c2", content: "done" },
    ]);
  });

  test("allowed_tools filters the tool list; a forced custom or namespaced tool is a chat function choice", () => {
    const allowed = responsesToChat({
      model: "m",
      input: "x",
      tools: [namespaceTool, customTool, { type: "function", name: "other" }],
      tool_choice: {
        type: "allowed_tools",
        mode: "required",
        tools: [
          { type: "custom", name: "apply_patch" },
          { type: "function", name: "other" },
        ],
      },
    });
    expect((allowed.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual(["apply_patch", "other"]);
    expect(allowed.tool_choice).toBe("required");
    const forced = responsesToChat({
      model: "m",
      input: "x",
      tools: [namespaceTool],
      tool_choice: { type: "function", name: "spawn", namespace: "multi_agent_v1" },
    });
    expect(forced.tool_choice).toEqual({ type: "function", function: { name: "multi_agent_v1__spawn" } });
  });

  test("400 only where dropping would change the answer's shape, naming the field", () => {
    const base = { model: "m", input: "x" };
    expect(thrown(() => responsesToChat({ ...base, background: true }))).toMatchObject({ status: 400, param: "background" });
    expect(
      thrown(() => responsesToChat({ ...base, tools: [{ type: "web_search" }], tool_choice: { type: "web_search_preview" } })),
    ).toMatchObject({ status: 400, param: "tool_choice" });
    expect(thrown(() => responsesToChat({ ...base, tools: [{ type: "file_search" }], tool_choice: "required" }))).toMatchObject({
      param: "tool_choice",
    });
    expect(
      thrown(() => responsesToChat({ ...base, input: [{ role: "user", content: [{ type: "input_file", file_id: "file_1" }] }] })),
    ).toMatchObject({ status: 400, param: "input[0].content[0].type" });
  });

  test("item references resolve from the store; an unknown one is a 400 naming it only when required", () => {
    const stored: Record<string, Record<string, unknown>> = { rs_1: { type: "reasoning", id: "rs_1", summary: [] } };
    const lookup = (id: string) => stored[id];
    const input = [
      { role: "user", content: "hi" },
      { type: "item_reference", id: "rs_1" },
    ];
    expect(resolveItemReferences(input, lookup, true)).toEqual([input[0], stored.rs_1]);
    const plain = [{ role: "user", content: "hi" }];
    expect(resolveItemReferences(plain, lookup, true)).toBe(plain);
    const unknown = [{ type: "item_reference", id: "msg_gone" }];
    expect(resolveItemReferences(unknown, lookup, false)).toEqual(unknown);
    expect(thrown(() => resolveItemReferences(unknown, lookup, true))).toMatchObject({
      code: "item_not_found",
      status: 400,
      param: "input[0].id",
    });
  });
});
