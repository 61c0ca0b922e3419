import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, test } from "bun:test";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

let upstream: ScriptedUpstream;
let harness: ProxyHarness;

afterEach(async () => {
  await harness?.close();
  await upstream?.close();
});

function setup(provider: Record<string, unknown> = {}, config: Record<string, unknown> = {}) {
  upstream = startScriptedUpstream({ wires: ["chat"] });
  harness = startProxy({
    providers: [{ name: "up", base_url: upstream.url, api_key: "sk-up", aliases: { "claude-*": "gpt-test" }, ...provider }],
    config,
  });
  return new Anthropic({ apiKey: "client-key", baseURL: harness.url, maxRetries: 0 });
}

const TOOLS = [
  {
    name: "Bash",
    description: "Run a command",
    input_schema: { type: "object" as const, properties: { command: { type: "string" } }, required: ["command"] },
  },
];

describe("the Anthropic SDK on /v1/messages, to a chat upstream", () => {
  test("create with tools: the chat request is translated, the tool call comes back as tool_use", async () => {
    const client = setup();
    upstream.enqueue({
      kind: "text",
      text: "Let me look.",
      toolCalls: [{ id: "call_a", name: "Bash", arguments: '{"command":"ls"}' }],
      usage: { prompt_tokens: 11, completion_tokens: 4 },
    });
    const { data, response } = await client.messages
      .create({
        model: "claude-sonnet-4-5-20250929",
        max_tokens: 1000,
        system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
        messages: [
          { role: "user", content: "list files" },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "pwd" } }] },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_1", content: "no such dir", is_error: true },
              { type: "text", text: "go on" },
            ],
          },
        ],
        tools: TOOLS,
        tool_choice: { type: "any" },
        stop_sequences: ["END"],
        metadata: { user_id: "u-1" },
        thinking: { type: "enabled", budget_tokens: 2000 },
      })
      .withResponse();
    expect(data.content as unknown[]).toEqual([
      { type: "text", text: "Let me look." },
      { type: "tool_use", id: "call_a", name: "Bash", input: { command: "ls" } },
    ]);
    expect(data.stop_reason).toBe("tool_use");
    expect(data.usage).toMatchObject({ input_tokens: 11, output_tokens: 4 });
    expect(response.headers.get("x-agentd-dropped")).toBe("cache_control");
    const sent = upstream.completionRequests()[0]!;
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.headers.authorization).toBe("Bearer sk-up");
    expect(sent.headers["x-api-key"]).toBeUndefined();
    expect(sent.body).toMatchObject({
      model: "gpt-test",
      max_completion_tokens: 1000,
      stop: ["END"],
      user: "u-1",
      reasoning_effort: "low",
      tool_choice: "required",
      tools: [{ type: "function", function: { name: "Bash", parameters: TOOLS[0]!.input_schema } }],
    });
    expect(sent.body.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "list files" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "Bash", arguments: '{"command":"pwd"}' } }],
      },
      { role: "tool", tool_call_id: "toolu_1", content: "Error: no such dir" },
      { role: "user", content: "go on" },
    ]);
  });

  test("stream: thinking, text and two parallel tool calls arrive as Anthropic's events, in order", async () => {
    const client = setup();
    upstream.enqueue({
      kind: "text",
      reasoning: "think first",
      chunks: ["Run", "ning"],
      toolCalls: [
        { id: "call_1", name: "Bash", arguments: '{"command":"ls"}' },
        { id: "call_2", name: "Bash", arguments: '{"command":"pwd"}' },
      ],
      interleaveCalls: true,
    });
    const stream = client.messages.stream({
      model: "claude-haiku-4-5",
      max_tokens: 500,
      messages: [{ role: "user", content: "go" }],
      tools: TOOLS,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type === "content_block_delta" ? `delta:${event.delta.type}` : event.type);
    const message = await stream.finalMessage();
    expect(types[0]).toBe("message_start");
    expect(types.at(-2)).toBe("message_delta");
    expect(types.at(-1)).toBe("message_stop");
    expect(types).toContain("delta:thinking_delta");
    expect(types).toContain("delta:input_json_delta");
    expect(message.content as unknown[]).toEqual([
      { type: "thinking", thinking: "think first", signature: "agentd-reasoning-v1" },
      { type: "text", text: "Running" },
      { type: "tool_use", id: "call_1", name: "Bash", input: { command: "ls" } },
      { type: "tool_use", id: "call_2", name: "Bash", input: { command: "pwd" } },
    ]);
    expect(message.stop_reason).toBe("tool_use");
    // The thinking block goes back on the next turn with agentd's placeholder signature: accepted.
    upstream.enqueue({ kind: "text", text: "done" });
    const next = await client.messages.create({
      model: "claude-haiku-4-5",
      max_tokens: 500,
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: message.content },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: [{ type: "text", text: "a b" }] },
            { type: "tool_result", tool_use_id: "call_2", content: "/tmp" },
          ],
        },
      ],
      tools: TOOLS,
    });
    expect(next.content as unknown[]).toEqual([{ type: "text", text: "done" }]);
    expect(upstream.completionRequests()[1]!.body.messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: "Running",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "Bash", arguments: '{"command":"ls"}' } },
          { id: "call_2", type: "function", function: { name: "Bash", arguments: '{"command":"pwd"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "a b" },
      { role: "tool", tool_call_id: "call_2", content: "/tmp" },
    ]);
  });

  test("count_tokens counts with o200k_base, no upstream request", async () => {
    const client = setup();
    const counted = await client.messages.countTokens({
      model: "claude-sonnet-4-5",
      system: "You are terse.",
      messages: [{ role: "user", content: "hello world" }],
      tools: TOOLS,
    });
    expect(counted.input_tokens).toBeGreaterThan(10);
    expect(upstream.completionRequests()).toHaveLength(0);
  });

  test("errors are typed by the SDK: 429 → RateLimitError with retry-after (again on a retry), open breaker → OverloadedError, 400 → BadRequestError", async () => {
    const client = setup({}, { max_attempts: 1, breaker: { failures: 1 } });
    upstream.enqueue({ kind: "http_error", status: 429, headers: { "retry-after": "3" } });
    const limited = await client.messages
      .create({ model: "claude-x", max_tokens: 10, messages: [{ role: "user", content: "a" }] })
      .catch((e) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect(limited.headers.get("retry-after")).toBe("3");
    expect(limited.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    // A rate limit opens no breaker: the client's retry within the wait is a rate limit too.
    const again = await client.messages
      .create({ model: "claude-x", max_tokens: 10, messages: [{ role: "user", content: "a" }] })
      .catch((e) => e);
    expect(again).toBeInstanceOf(Anthropic.RateLimitError);
    expect(upstream.completionRequests()).toHaveLength(1);
    // The watchdog opens the breaker: that, not the rate limit, is what the client hears now.
    await fetch(`${harness.url}/api/admin/proxy/providers/up/breaker/open`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    const open = await client.messages
      .create({ model: "claude-x", max_tokens: 10, messages: [{ role: "user", content: "a" }] })
      .catch((e) => e);
    expect(open).toBeInstanceOf(Anthropic.InternalServerError);
    expect(open.status).toBe(529);
    expect(open.error).toMatchObject({ type: "error", error: { type: "overloaded_error" } });
    const bad = await client.messages.create({ model: "claude-x", max_tokens: 10, messages: "nope" as never }).catch((e) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect(bad.error).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
  });

  test("a stream cut after its first event ends with an error event the SDK throws", async () => {
    const client = setup();
    upstream.enqueue({ kind: "reset_mid_stream", afterEvents: 3, reply: { kind: "text", chunks: ["a", "b", "c"], chunkDelayMs: 20 } });
    const stream = client.messages.stream({ model: "claude-x", max_tokens: 10, messages: [{ role: "user", content: "a" }] });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of stream) seen.push(event.type);
    })().catch((e) => e);
    expect(seen.slice(0, 3)).toEqual(["message_start", "content_block_start", "content_block_delta"]);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(String(error.message)).toContain("overloaded_error");
  });

  test("to a Responses upstream: translated on through chat, streamed and not", async () => {
    upstream = startScriptedUpstream({ wires: ["responses"] });
    harness = startProxy({ providers: [{ name: "resp", base_url: upstream.url, wire: "responses", aliases: { "claude-*": "gpt-test" } }] });
    const client = new Anthropic({ apiKey: "client-key", baseURL: harness.url, maxRetries: 0 });
    upstream.enqueue(
      { kind: "text", text: "whole", toolCalls: [{ id: "call_r", name: "Bash", arguments: '{"command":"ls"}' }] },
      { kind: "text", reasoning: "because", chunks: ["str", "eam"] },
    );
    const whole = await client.messages.create({
      model: "claude-opus-4-1",
      max_tokens: 300,
      system: "sys",
      messages: [{ role: "user", content: "hi" }],
      tools: TOOLS,
      thinking: { type: "enabled", budget_tokens: 20_000 },
    });
    expect(whole.content as unknown[]).toEqual([
      { type: "text", text: "whole" },
      { type: "tool_use", id: "call_r", name: "Bash", input: { command: "ls" } },
    ]);
    expect(whole.stop_reason).toBe("tool_use");
    const sent = upstream.completionRequests()[0]!;
    expect(sent.path).toBe("/v1/responses");
    expect(sent.body).toMatchObject({ model: "gpt-test", instructions: "sys", max_output_tokens: 300, reasoning: { effort: "high" } });
    const streamed = await client.messages
      .stream({ model: "claude-opus-4-1", max_tokens: 300, messages: [{ role: "user", content: "hi" }] })
      .finalMessage();
    expect(streamed.content as unknown[]).toMatchObject([
      { type: "thinking", thinking: "because" },
      { type: "text", text: "stream" },
    ]);
    // The Responses API has no stop sequences: agentd cuts the answer at the first one.
    upstream.enqueue({ kind: "text", chunks: ["keep ", "this END not this"] });
    const cut = await client.messages
      .stream({ model: "claude-opus-4-1", max_tokens: 300, stop_sequences: ["END"], messages: [{ role: "user", content: "hi" }] })
      .finalMessage();
    expect(cut.content as unknown[]).toMatchObject([{ type: "text", text: "keep this " }]);
    expect(upstream.completionRequests()[2]!.body.stop).toBeUndefined();
  });
});
