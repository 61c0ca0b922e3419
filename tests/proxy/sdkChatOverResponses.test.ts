import { afterEach, describe, expect, test } from "bun:test";
import type OpenAI from "openai";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProviderInput, type ProxyHarness } from "./proxyHarness.ts";

let upstreams: ScriptedUpstream[] = [];
let harness: ProxyHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  for (const upstream of upstreams) await upstream.close();
  upstreams = [];
});

/** Providers over fresh scripted upstreams; the first is a Responses upstream unless given otherwise. */
function setup(
  providers: Partial<ProviderInput>[] = [{}],
  config: Record<string, unknown> = {},
): { ups: ScriptedUpstream[]; h: ProxyHarness } {
  const ups = providers.map(() => startScriptedUpstream());
  upstreams.push(...ups);
  const h = startProxy({ providers: providers.map((p, i) => ({ name: `p${i}`, base_url: ups[i]!.url, wire: "responses", ...p })), config });
  harness = h;
  return { ups, h };
}

const tools: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: "function",
    function: { name: "read_file", description: "Reads a file", parameters: { type: "object", properties: { path: { type: "string" } } } },
  },
];

function sse(...events: object[]): string {
  return events.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
}

const created = {
  type: "response.created",
  response: { id: "resp_x", object: "response", created_at: 1, status: "in_progress", model: "gpt-test", output: [] },
};

async function rawChat(h: ProxyHarness, body: object): Promise<{ status: number; text: string }> {
  const response = await fetch(`${h.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

describe("chat completions over a Responses upstream", () => {
  test("non-streaming: the request is translated and the answer is a chat completion with usage", async () => {
    const { ups, h } = setup();
    ups[0]!.enqueue({ kind: "text", text: "Paris", usage: { prompt_tokens: 9, completion_tokens: 1 } });
    const { data, response } = await h.client.chat.completions
      .create({
        model: "gpt-test",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Capital of France?" },
        ],
        max_tokens: 20,
        temperature: 0,
      })
      .withResponse();
    expect(data.object).toBe("chat.completion");
    expect(data.choices[0]!.message.content).toBe("Paris");
    expect(data.choices[0]!.finish_reason).toBe("stop");
    expect(data.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 });
    expect(response.headers.get("x-agentd-provider")).toBe("p0");
    const sent = ups[0]!.completionRequests()[0]!;
    expect(sent.path).toBe("/v1/responses");
    expect(sent.body).toEqual({
      model: "gpt-test",
      instructions: "Be brief.",
      input: [{ role: "user", content: "Capital of France?" }],
      max_output_tokens: 20,
      temperature: 0,
      store: false,
    });
    expect(h.events("proxy.request")[0]).toMatchObject({ provider: "p0", outcome: "ok", tokens_in: 9, tokens_out: 1 });
  });

  test("streaming: text deltas, finish_reason and usage (when asked), ending with [DONE]", async () => {
    const { ups, h } = setup();
    ups[0]!.enqueue({ kind: "text", chunks: ["Hel", "lo"] }, { kind: "text", chunks: ["a", "b"] });
    const stream = await h.client.chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let finish: string | null | undefined;
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish ??= chunk.choices[0]?.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe("Hello");
    expect(finish).toBe("stop");
    expect(usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3 });
    expect(ups[0]!.completionRequests()[0]!.body.stream).toBe(true);
    const raw = await rawChat(h, { model: "gpt-test", messages: [{ role: "user", content: "hi" }], stream: true });
    expect(raw.text).toEndWith('"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
    expect(raw.text).not.toContain('"usage"');
  });

  test("tool calls over three turns keep their call ids paired", async () => {
    const { ups, h } = setup();
    const up = ups[0]!;
    up.enqueue(
      {
        kind: "text",
        toolCalls: [
          { id: "call_a", name: "read_file", arguments: '{"path":"/a"}' },
          { id: "call_b", name: "read_file", arguments: '{"path":"/b"}' },
        ],
      },
      { kind: "text", text: "one more", toolCalls: [{ id: "call_c", name: "read_file", arguments: '{"path":"/c"}' }] },
      { kind: "text", text: "all read" },
    );
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "read a, b, c" }];
    const first = await h.client.chat.completions.stream({ model: "gpt-test", messages, tools }).finalChatCompletion();
    const calls = first.choices[0]!.message.tool_calls!;
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    expect(calls.map((c) => c.type === "function" && [c.id, c.function.name, c.function.arguments])).toEqual([
      ["call_a", "read_file", '{"path":"/a"}'],
      ["call_b", "read_file", '{"path":"/b"}'],
    ]);
    messages.push(
      first.choices[0]!.message,
      ...calls.map((c) => ({ role: "tool" as const, tool_call_id: c.id, content: `contents of ${c.id}` })),
    );
    const second = await h.client.chat.completions.create({ model: "gpt-test", messages, tools, tool_choice: "auto" });
    expect(second.choices[0]!.message.content).toBe("one more");
    const third_call = second.choices[0]!.message.tool_calls![0]!;
    expect(third_call.id).toBe("call_c");
    messages.push(second.choices[0]!.message, { role: "tool", tool_call_id: third_call.id, content: "contents of call_c" });
    const third = await h.client.chat.completions.create({ model: "gpt-test", messages, tools });
    expect(third.choices[0]!.message.content).toBe("all read");
    const sent = up.completionRequests()[2]!.body;
    expect(sent.tools).toEqual([
      {
        type: "function",
        name: "read_file",
        description: "Reads a file",
        parameters: { type: "object", properties: { path: { type: "string" } } },
        strict: false,
      },
    ]);
    expect(sent.input).toEqual([
      { role: "user", content: "read a, b, c" },
      { type: "function_call", call_id: "call_a", name: "read_file", arguments: '{"path":"/a"}' },
      { type: "function_call", call_id: "call_b", name: "read_file", arguments: '{"path":"/b"}' },
      { type: "function_call_output", call_id: "call_a", output: "contents of call_a" },
      { type: "function_call_output", call_id: "call_b", output: "contents of call_b" },
      { role: "assistant", content: "one more" },
      { type: "function_call", call_id: "call_c", name: "read_file", arguments: '{"path":"/c"}' },
      { type: "function_call_output", call_id: "call_c", output: "contents of call_c" },
    ]);
    expect(up.completionRequests()[1]!.body.tool_choice).toBe("auto");
  });

  test("an incomplete response finishes on length", async () => {
    const { ups, h } = setup();
    ups[0]!.enqueue({ kind: "text", text: "trunc", finishReason: "length" });
    const completion = await h.client.chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "long" }],
      max_completion_tokens: 2,
    });
    expect(completion.choices[0]!.finish_reason).toBe("length");
    expect(ups[0]!.completionRequests()[0]!.body.max_output_tokens).toBe(2);
  });

  test("reasoning comes back as reasoning_content, whole and streamed", async () => {
    const { ups, h } = setup();
    ups[0]!.enqueue({ kind: "text", text: "42", reasoning: "six times seven" }, { kind: "text", text: "42", reasoning: "six times seven" });
    const whole = await h.client.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "?" }] });
    expect((whole.choices[0]!.message as unknown as { reasoning_content: string }).reasoning_content).toBe("six times seven");
    const stream = await h.client.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "?" }], stream: true });
    let reasoning = "";
    let text = "";
    for await (const chunk of stream) {
      reasoning += (chunk.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? "";
      text += chunk.choices[0]?.delta.content ?? "";
    }
    expect(reasoning).toBe("six times seven");
    expect(text).toBe("42");
  });
});

describe("failures of a Responses upstream, seen by a chat client", () => {
  test("response.failed mid-stream is an error chunk then [DONE], counted as an upstream error", async () => {
    const { ups, h } = setup();
    const delta = { type: "response.output_text.delta", item_id: "m", output_index: 0, content_index: 0, delta: "par" };
    const failed = {
      type: "response.failed",
      response: { ...created.response, status: "failed", error: { code: "server_error", message: "model crashed" } },
    };
    const body = sse(created, delta, failed);
    ups[0]!.enqueue(
      { kind: "raw", status: 200, body, headers: { "content-type": "text/event-stream" } },
      { kind: "raw", status: 200, body, headers: { "content-type": "text/event-stream" } },
    );
    const raw = await rawChat(h, { model: "gpt-test", messages: [{ role: "user", content: "hi" }], stream: true });
    expect(raw.status).toBe(200);
    const frames = raw.text.trim().split("\n\n");
    expect(frames.at(-1)).toBe("data: [DONE]");
    expect(JSON.parse(frames.at(-2)!.slice("data: ".length))).toMatchObject({ error: { code: "upstream_error", type: "server_error" } });
    expect(JSON.parse(frames.at(-2)!.slice("data: ".length)).error.message).toEndWith(
      "the upstream stream reported an error: model crashed",
    );
    expect(raw.text).toContain('"content":"par"');
    expect(h.events("upstream.error")[0]).toMatchObject({ provider: "p0", cause: "http_5xx" });
    const stream = await h.client.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }], stream: true });
    const error = await (async () => {
      for await (const _chunk of stream);
    })().catch((e) => e);
    expect(String(error?.message)).toContain("model crashed");
  });

  test("a stall mid-stream hits the idle timeout: an error chunk, [DONE], and the upstream is let go", async () => {
    const { ups, h } = setup([{ timeouts: { idle_ms: 200 } }]);
    ups[0]!.enqueue({ kind: "stall_mid_stream", afterEvents: 4, reply: { kind: "text", chunks: ["part", "ial"] } });
    const raw = await rawChat(h, { model: "gpt-test", messages: [{ role: "user", content: "hi" }], stream: true });
    expect(raw.text).toContain('"content":"part"');
    expect(raw.text).toContain('"code":"upstream_timeout"');
    expect(raw.text).toEndWith("data: [DONE]\n\n");
    expect(raw.text).not.toContain('"finish_reason":"stop"');
    await ups[0]!.waitForDisconnect(0);
  });

  test("a failure before the first event fails over to the next provider (a chat one)", async () => {
    const { ups, h } = setup([{ priority: 10 }, { wire: "chat" }]);
    ups[0]!.enqueue({
      kind: "raw",
      status: 200,
      body: sse({
        type: "response.failed",
        response: { ...created.response, status: "failed", error: { code: "x", message: "no capacity" } },
      }),
      headers: { "content-type": "text/event-stream" },
    });
    ups[0]!.setDefault({ kind: "http_error", status: 500 });
    ups[1]!.enqueue({ kind: "text", chunks: ["from ", "chat"] });
    const stream = await h.client.chat.completions
      .create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }], stream: true })
      .withResponse();
    let text = "";
    for await (const chunk of stream.data) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("from chat");
    expect(stream.response.headers.get("x-agentd-provider")).toBe("p1");
    expect(ups[1]!.completionRequests()[0]!.path).toBe("/v1/chat/completions");
    expect(ups[0]!.completionRequests().length).toBeGreaterThanOrEqual(1);
  });

  test("a 200 answer without an output array is malformed: retried before anything reaches the client", async () => {
    const { ups, h } = setup();
    ups[0]!.enqueue(
      { kind: "raw", status: 200, body: '{"id":"resp_broken","object":"response"}', headers: { "content-type": "application/json" } },
      { kind: "text", text: "second try" },
    );
    const completion = await h.client.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] });
    expect(completion.choices[0]!.message.content).toBe("second try");
    expect(h.events("upstream.error")[0]).toMatchObject({ provider: "p0", cause: "malformed" });
  });

  test("a field only Chat Completions has goes to the chat provider; with none, it is a 400 naming it", async () => {
    const both = setup([{ priority: 10 }, { wire: "chat" }]);
    const completion = await both.h.client.chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "hi" }],
      n: 2,
    });
    expect(completion.choices[0]!.message.content).toBe("ok");
    expect(both.ups[0]!.completionRequests()).toHaveLength(0);
    expect(both.ups[1]!.completionRequests()[0]!.body.n).toBe(2);
    await harness!.close();
    harness = undefined;
    const only = setup();
    const error = await only.h.client.chat.completions
      .create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }], n: 2 })
      .catch((e) => e);
    expect(error.status).toBe(400);
    expect(error.code).toBe("unsupported_parameter");
    expect(error.param).toBe("n");
    expect(only.ups[0]!.completionRequests()).toHaveLength(0);
  });
});
