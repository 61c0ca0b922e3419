/** The openai SDK (Chat and Responses) and the Anthropic SDK through a `wire: "anthropic"` provider backed by a scripted Messages upstream. */
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

function setup(config: Record<string, unknown> = {}) {
  upstream = startScriptedUpstream({ wires: ["anthropic"] });
  harness = startProxy({
    providers: [{ name: "claude", base_url: upstream.url, api_key: "sk-ant", wire: "anthropic", aliases: { fast: "claude-haiku-4-5" } }],
    config,
  });
}

const TOOL = {
  type: "function" as const,
  function: { name: "lookup", description: "Look up", parameters: { type: "object", properties: { q: { type: "string" } } } },
};

describe("a wire: anthropic provider", () => {
  test("chat completions, not streamed: translated to Messages with the provider's key, answer back as a completion", async () => {
    setup();
    upstream.enqueue({
      kind: "text",
      text: "Looking.",
      toolCalls: [{ id: "toolu_1", name: "lookup", arguments: '{"q":"x"}' }],
      usage: { prompt_tokens: 9, completion_tokens: 2 },
    });
    const { data, response } = await harness.client.chat.completions
      .create({
        model: "fast",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "find x" },
        ],
        tools: [TOOL],
        tool_choice: "required",
        stop: ["END"],
        seed: 3,
        reasoning_effort: "low",
        max_completion_tokens: 500,
      })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe("Looking.");
    expect(data.choices[0]!.message.tool_calls).toEqual([
      { id: "toolu_1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } },
    ]);
    expect(data.choices[0]!.finish_reason).toBe("tool_calls");
    expect(data.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 2 });
    expect(response.headers.get("x-agentd-dropped")).toBe("seed");
    const sent = upstream.completionRequests()[0]!;
    expect(sent.path).toBe("/v1/messages");
    expect(sent.headers["x-api-key"]).toBe("sk-ant");
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.headers["anthropic-version"]).toBe("2023-06-01");
    expect(sent.body).toEqual({
      model: "claude-haiku-4-5",
      max_tokens: 2548,
      system: "Be brief.",
      messages: [{ role: "user", content: [{ type: "text", text: "find x" }] }],
      stop_sequences: ["END"],
      thinking: { type: "enabled", budget_tokens: 2048 },
      tools: [{ name: "lookup", description: "Look up", input_schema: TOOL.function.parameters }],
      tool_choice: { type: "any" },
    });
  });

  test("chat completions, streamed: thinking, text and a tool call as chunks, with usage; tool results go back as tool_result blocks", async () => {
    setup();
    upstream.enqueue({
      kind: "text",
      reasoning: "hmm",
      chunks: ["Hel", "lo"],
      toolCalls: [{ id: "toolu_2", name: "lookup", arguments: '{"q":"y"}' }],
      usage: { prompt_tokens: 4, completion_tokens: 6 },
    });
    const stream = await harness.client.chat.completions.create({
      model: "fast",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: null, tool_calls: [{ id: "t0", type: "function", function: { name: "lookup", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "t0", content: "nothing" },
      ],
      tools: [TOOL],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let reasoning = "";
    let args = "";
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as {
        content?: string;
        reasoning_content?: string;
        tool_calls?: { function?: { arguments?: string } }[];
      };
      text += delta?.content ?? "";
      reasoning += delta?.reasoning_content ?? "";
      args += delta?.tool_calls?.[0]?.function?.arguments ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect({ text, reasoning, args, finish }).toEqual({ text: "Hello", reasoning: "hmm", args: '{"q":"y"}', finish: "tool_calls" });
    expect(usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 6 });
    expect(upstream.completionRequests()[0]!.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "hi" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "t0", name: "lookup", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t0", content: "nothing" }] },
    ]);
  });

  test("responses, streamed and not: the Messages answer comes back as a Responses answer", async () => {
    setup();
    upstream.enqueue({ kind: "text", text: "plain" }, { kind: "text", chunks: ["str", "eamed"] });
    const whole = await harness.client.responses.create({ model: "fast", input: "hi", instructions: "terse" });
    expect(whole.output_text).toBe("plain");
    const stream = await harness.client.responses.create({ model: "fast", input: "hi", stream: true });
    let text = "";
    let completed = false;
    for await (const event of stream) {
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") completed = true;
    }
    expect({ text, completed }).toEqual({ text: "streamed", completed: true });
    expect(upstream.completionRequests()[0]!.body).toMatchObject({ system: "terse", messages: [{ role: "user" }] });
  });

  test("/v1/messages passes through, count_tokens goes to the upstream, agentd's own thinking blocks are left out", async () => {
    setup();
    const client = new Anthropic({ apiKey: "client-key", baseURL: harness.url, maxRetries: 0 });
    upstream.enqueue({ kind: "text", chunks: ["a", "b"] });
    const message = await client.messages
      .stream({
        model: "fast",
        max_tokens: 10,
        messages: [
          { role: "user", content: "q" },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "from gpt", signature: "agentd-reasoning-v1" },
              { type: "text", text: "r" },
            ],
          },
          { role: "user", content: "q2" },
        ],
      })
      .finalMessage();
    expect(message.content).toMatchObject([{ type: "text", text: "ab" }]);
    expect(upstream.completionRequests()[0]!.body.messages[1]).toEqual({ role: "assistant", content: [{ type: "text", text: "r" }] });
    upstream.enqueue({ kind: "text", usage: { prompt_tokens: 42, completion_tokens: 0 } });
    const counted = await client.messages.countTokens({ model: "fast", messages: [{ role: "user", content: "q" }] });
    expect(counted.input_tokens).toBe(42);
    expect(upstream.completionRequests()[1]!.path).toBe("/v1/messages/count_tokens");
  });

  test("an upstream 429 in Anthropic's shape fails over like any other: the openai SDK sees OpenAI's 429", async () => {
    setup({ max_attempts: 1 });
    upstream.enqueue({ kind: "http_error", status: 429, headers: { "retry-after": "2" } });
    const error = await harness.client.chat.completions
      .create({ model: "fast", messages: [{ role: "user", content: "a" }] })
      .catch((e) => e);
    expect(error.status).toBe(429);
    expect(error.headers.get("retry-after")).toBe("2");
  });

  test("failover across wires on /v1/messages: a chat provider failing before its first event hands over to the Anthropic one", async () => {
    const chat = startScriptedUpstream({ wires: ["chat"] });
    upstream = startScriptedUpstream({ wires: ["anthropic"] });
    harness = startProxy({
      providers: [
        { name: "gpt", base_url: chat.url, priority: 1 },
        { name: "claude", base_url: upstream.url, wire: "anthropic" },
      ],
      config: { max_attempts: 1 },
    });
    try {
      chat.enqueue({ kind: "http_error", status: 503 });
      upstream.enqueue({ kind: "text", chunks: ["saved"] });
      const client = new Anthropic({ apiKey: "client-key", baseURL: harness.url, maxRetries: 0 });
      const { data, response } = await client.messages
        .create({ model: "claude-x", max_tokens: 10, messages: [{ role: "user", content: "a" }] })
        .withResponse();
      expect(data.content as unknown[]).toEqual([{ type: "text", text: "saved" }]);
      expect(response.headers.get("x-agentd-provider")).toBe("claude");
      expect(chat.completionRequests()).toHaveLength(1);
    } finally {
      await chat.close();
    }
  });
});
