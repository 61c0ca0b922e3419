import { afterEach, describe, expect, test } from "bun:test";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

let upstream: ScriptedUpstream;
let harness: ProxyHarness;

afterEach(async () => {
  await harness?.close();
  await upstream?.close();
});

function setup(provider: Record<string, unknown> = {}) {
  upstream = startScriptedUpstream();
  harness = startProxy({ providers: [{ name: "up", base_url: upstream.url, api_key: "sk-up", ...provider }] });
}

describe("chat completions through the SDK", () => {
  test("non-streaming answer passes through with agentd headers and the provider's key", async () => {
    setup();
    upstream.enqueue({ kind: "text", text: "hello there", usage: { prompt_tokens: 7, completion_tokens: 2 } });
    const { data, response } = await harness.client.chat.completions
      .create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe("hello there");
    expect(data.usage?.prompt_tokens).toBe(7);
    expect(response.headers.get("x-agentd-provider")).toBe("up");
    expect(response.headers.get("x-agentd-overhead-ms")).toMatch(/^\d+(\.\d+)?$/);
    const sent = upstream.completionRequests()[0]!;
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.headers.authorization).toBe("Bearer sk-up");
    expect(sent.body.messages).toEqual([{ role: "user", content: "hi" }]);
    expect(harness.events("proxy.request")[0]).toMatchObject({
      provider: "up",
      model: "gpt-test",
      status: 200,
      tokens_in: 7,
      tokens_out: 2,
    });
  });

  test("streaming answer arrives chunk by chunk, with usage", async () => {
    setup();
    upstream.enqueue({ kind: "text", chunks: ["Hel", "lo", "!"], keepAlives: true, crlf: true });
    const stream = await harness.client.chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe("Hello!");
    expect(usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3 });
  });

  test("an alias is sent upstream under its real name", async () => {
    setup({ aliases: { fast: "gpt-test" } });
    await harness.client.chat.completions.create({ model: "fast", messages: [{ role: "user", content: "hi" }] });
    expect(upstream.completionRequests()[0]!.body.model).toBe("gpt-test");
  });

  test("tool calls stream and the tool result goes back in the next turn", async () => {
    setup();
    upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "call_a", name: "exec_command", arguments: '{"cmd":"uptime"}' }] },
      { kind: "text", text: "load is low" },
    );
    const runner = harness.client.chat.completions.stream({
      model: "gpt-test",
      messages: [{ role: "user", content: "how loaded?" }],
      tools: [
        { type: "function", function: { name: "exec_command", parameters: { type: "object", properties: { cmd: { type: "string" } } } } },
      ],
    });
    const first = await runner.finalChatCompletion();
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(call.type === "function" && call.function.arguments).toBe('{"cmd":"uptime"}');
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const second = await harness.client.chat.completions.create({
      model: "gpt-test",
      messages: [
        { role: "user", content: "how loaded?" },
        first.choices[0]!.message,
        { role: "tool", tool_call_id: call.id, content: "0.01" },
      ],
    });
    expect(second.choices[0]!.message.content).toBe("load is low");
    expect(upstream.completionRequests()[1]!.body.messages[2]).toEqual({ role: "tool", tool_call_id: "call_a", content: "0.01" });
  });

  test("an unknown model is a 404 that says how to serve it", async () => {
    setup({ models: ["gpt-test"] });
    const error = await harness.client.chat.completions.create({ model: "other", messages: [] }).catch((e) => e);
    expect(error.status).toBe(404);
    expect(error.code).toBe("model_not_found");
  });
});
