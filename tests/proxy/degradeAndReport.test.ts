import { afterEach, describe, expect, test } from "bun:test";
import { setLogLevel } from "../../src/core/log/index.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";
import { renderPrometheus } from "../../src/core/metrics/index.ts";

/**
 * The rule "degrade, report, never refuse what does not change the answer's shape", through the
 * proxy over HTTP against a chat-only and a Responses-only scripted upstream.
 */

let upstream: ScriptedUpstream | undefined;
let harness: ProxyHarness | undefined;

afterEach(async () => {
  setLogLevel("info");
  await harness?.close();
  await upstream?.close();
  harness = undefined;
  upstream = undefined;
});

function setup(wire: "chat" | "responses"): { up: ScriptedUpstream; h: ProxyHarness } {
  const up = startScriptedUpstream({ wires: [wire] });
  upstream = up;
  const h = startProxy({ providers: [{ name: "up", base_url: up.url, wire, api_key: "up-key" }] });
  harness = h;
  return { up, h };
}

function post(h: ProxyHarness, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${h.url}/v1${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer client-key", ...headers },
    body: JSON.stringify(body),
  });
}

/** The `data:` payloads of an SSE body, parsed. */
function events(text: string): any[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
    .map((line) => JSON.parse(line.slice(6)));
}

const codexTools = [
  {
    type: "function",
    name: "shell",
    parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } } } },
  },
  {
    type: "namespace",
    name: "multi_agent_v1",
    description: "Sub-agents.",
    tools: [{ type: "function", name: "spawn", parameters: { type: "object", properties: { task: { type: "string" } } } }],
  },
  { type: "custom", name: "apply_patch", description: "Applies a patch." },
  { type: "web_search" },
];

describe("Responses client over a chat-only upstream", () => {
  test("a Codex-like streamed turn: dropped fields reported, tools mapped back, parallel items ordered, reasoning as summary", async () => {
    setLogLevel("debug");
    const { up, h } = setup("chat");
    up.enqueue({
      kind: "text",
      reasoning: "Plan: list, spawn, patch.",
      toolCalls: [
        { id: "call_a", name: "shell", arguments: '{"command":["ls"]}' },
        { id: "call_b", name: "multi_agent_v1__spawn", arguments: '{"task":"t"}' },
        { id: "call_c", name: "apply_patch", arguments: '{"input":"*** Begin Patch"}' },
      ],
      interleaveCalls: true,
      headers: { "x-ratelimit-remaining-requests": "99", "x-vendor-trace": "v1", "set-cookie": "upstream=1" },
    });
    const response = await post(
      h,
      "/responses",
      {
        model: "gpt-test",
        instructions: "You are Codex.",
        input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "go" }] }],
        tools: codexTools,
        tool_choice: "auto",
        parallel_tool_calls: true,
        reasoning: { effort: "medium", summary: "auto" },
        store: false,
        stream: true,
        include: ["reasoning.encrypted_content"],
        prompt_cache_key: "thread-1",
        client_metadata: { originator: "codex_exec" },
        text: { verbosity: "low" },
      },
      {
        "session-id": "s-1",
        "thread-id": "t-1",
        "x-client-request-id": "r-1",
        "x-codex-turn-metadata": "m",
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        cookie: "agentd=secret",
      },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-agentd-dropped")!.split(",").sort()).toEqual(["client_metadata", "include", "tools.web_search"]);
    expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("99");
    expect(response.headers.get("x-vendor-trace")).toBe("v1");
    expect(response.headers.get("set-cookie")).toBeNull();
    const all = events(await response.text());

    const sent = up.completionRequests()[0]!;
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.headers).toMatchObject({
      "session-id": "s-1",
      "thread-id": "t-1",
      "x-client-request-id": "r-1",
      "x-codex-turn-metadata": "m",
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      authorization: "Bearer up-key",
    });
    expect(sent.headers.cookie).toBeUndefined();
    expect(sent.body.tools.map((t: any) => t.function.name)).toEqual(["shell", "multi_agent_v1__spawn", "apply_patch"]);
    expect(sent.body).toMatchObject({ prompt_cache_key: "thread-1", store: false, verbosity: "low", reasoning_effort: "medium" });
    expect(sent.body.client_metadata).toBeUndefined();

    // One item open at a time: every added item is done before the next is added.
    let open: number | undefined;
    for (const event of all) {
      if (event.type === "response.output_item.added") {
        expect(open).toBeUndefined();
        open = event.output_index;
      } else if (event.type === "response.output_item.done") {
        expect(event.output_index).toBe(open);
        open = undefined;
      }
    }
    expect(
      all
        .filter((e) => e.type === "response.reasoning_summary_text.delta")
        .map((e) => e.delta)
        .join(""),
    ).toBe("Plan: list, spawn, patch.");
    const completed = all.find((e) => e.type === "response.completed").response;
    expect(completed.output.map((item: any) => item.type)).toEqual(["reasoning", "function_call", "function_call", "custom_tool_call"]);
    expect(completed.output[1]).toMatchObject({ call_id: "call_a", name: "shell", arguments: '{"command":["ls"]}' });
    expect(completed.output[2]).toMatchObject({ call_id: "call_b", name: "spawn", namespace: "multi_agent_v1", arguments: '{"task":"t"}' });
    expect(completed.output[3]).toMatchObject({ call_id: "call_c", name: "apply_patch", input: "*** Begin Patch" });

    expect(h.events("proxy.field_dropped")[0]).toMatchObject({ provider: "up", wire: "chat", model: "gpt-test" });
    const metrics = renderPrometheus(h.proxy.metricFamilies());
    expect(metrics).toContain('agentd_proxy_dropped_fields_total{field="client_metadata"} 1');
    expect(metrics).toContain('agentd_proxy_dropped_fields_total{field="tools.web_search"} 1');
  });

  test("item_reference inputs resolve from agentd's stored output; an unknown id is a 400 naming it", async () => {
    const { up, h } = setup("chat");
    up.enqueue({ kind: "text", reasoning: "Look first.", toolCalls: [{ id: "call_1", name: "shell", arguments: '{"command":["ls"]}' }] });
    const first = (await (await post(h, "/responses", { model: "gpt-test", input: "list", tools: codexTools.slice(0, 1) })).json()) as any;
    const [reasoning, call] = first.output;
    expect(reasoning.type).toBe("reasoning");
    const second = await post(h, "/responses", {
      model: "gpt-test",
      tools: codexTools.slice(0, 1),
      input: [
        { role: "user", content: "list" },
        { type: "item_reference", id: reasoning.id },
        { type: "item_reference", id: call.id },
        { type: "function_call_output", call_id: "call_1", output: "a.txt" },
      ],
    });
    expect(second.status).toBe(200);
    expect(second.headers.get("x-agentd-dropped")).toBe("input.reasoning");
    expect(up.completionRequests()[1]!.body.messages).toEqual([
      { role: "user", content: "list" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "shell", arguments: '{"command":["ls"]}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "a.txt" },
    ]);
    const unknown = await post(h, "/responses", {
      model: "gpt-test",
      input: [
        { role: "user", content: "x" },
        { type: "item_reference", id: "rs_gone" },
      ],
    });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as any).error).toMatchObject({ code: "item_not_found", param: "input[1].id" });
    expect(up.completionRequests()).toHaveLength(2);
  });

  test("top_logprobs reaches the chat upstream as logprobs and comes back on the output text", async () => {
    const { up, h } = setup("chat");
    up.enqueue({ kind: "text", text: "Hi", logprobs: true });
    const response = await h.client.responses.create({ model: "gpt-test", input: "x", top_logprobs: 2, max_tool_calls: 2 } as never);
    expect(up.completionRequests()[0]!.body).toMatchObject({ logprobs: true, top_logprobs: 2 });
    const part = ((response as any).output[0] as any).content[0];
    expect(part.logprobs[0]).toMatchObject({ token: "Hi", logprob: -0.25 });
  });

  test("a field the provider rejects is dropped as a learned quirk and reported too", async () => {
    const { up, h } = setup("chat");
    up.enqueue({ kind: "http_error", status: 400, message: "Unsupported parameter: 'verbosity' is not supported with this model." });
    const response = await post(h, "/responses", { model: "gpt-test", input: "x", text: { verbosity: "high" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-agentd-dropped")).toBe("verbosity");
    expect(up.completionRequests()[1]!.body.verbosity).toBeUndefined();
  });
});

describe("Chat client over a Responses-only upstream", () => {
  test("stop is honoured on a whole answer; seed and penalties dropped and reported", async () => {
    const { up, h } = setup("responses");
    up.enqueue({ kind: "text", text: "Thought: done\nObservation: more", toolCalls: [{ name: "f", arguments: "{}" }] });
    const { data, response } = await h.client.chat.completions
      .create({ model: "gpt-test", messages: [{ role: "user", content: "x" }], stop: ["\nObservation:"], seed: 3, frequency_penalty: 0.4 })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe("Thought: done");
    expect(data.choices[0]!.message.tool_calls).toBeUndefined();
    expect(data.choices[0]!.finish_reason).toBe("stop");
    expect(response.headers.get("x-agentd-dropped")).toBe("seed,frequency_penalty");
    const sent = up.completionRequests()[0]!;
    expect(sent.path).toBe("/v1/responses");
    expect(sent.body.stop).toBeUndefined();
    expect(sent.body.seed).toBeUndefined();
  });

  test("a stream is cut at the first stop sequence and the upstream request ends", async () => {
    const { up, h } = setup("responses");
    up.enqueue({ kind: "text", chunks: ["Hello wor", "ld STO", "P and then", " more"], chunkDelayMs: 20 });
    const stream = await h.client.chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "x" }],
      stop: "STOP",
      stream: true,
    });
    let text = "";
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe("Hello world ");
    expect(finish).toBe("stop");
    await up.waitForDisconnect(0);
  });

  test("logprobs map to the Responses include and back to the choice", async () => {
    const { up, h } = setup("responses");
    up.enqueue({ kind: "text", text: "Yes", logprobs: true });
    const completion = await h.client.chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "x" }],
      logprobs: true,
      top_logprobs: 1,
    });
    expect(up.completionRequests()[0]!.body).toMatchObject({ include: ["message.output_text.logprobs"], top_logprobs: 1 });
    expect(completion.choices[0]!.logprobs!.content![0]).toMatchObject({ token: "Yes", logprob: -0.25 });
  });

  test("n > 1 stays a 400 naming it", async () => {
    const { up, h } = setup("responses");
    const error = await h.client.chat.completions
      .create({ model: "gpt-test", messages: [{ role: "user", content: "x" }], n: 2 })
      .catch((e) => e);
    expect(error.status).toBe(400);
    expect(error.param).toBe("n");
    expect(up.completionRequests()).toHaveLength(0);
  });
});
