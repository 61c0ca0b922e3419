import { afterEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { waitFor } from "../support/waitFor.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

let upstreams: ScriptedUpstream[] = [];
let harness: ProxyHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await Promise.all(upstreams.map((u) => u.close()));
  upstreams = [];
});

function twoProviders(config: Record<string, unknown> = {}, timeouts: Record<string, number> = {}) {
  const a = startScriptedUpstream();
  const b = startScriptedUpstream();
  upstreams = [a, b];
  harness = startProxy({
    providers: [
      { name: "a", base_url: a.url, priority: 10, timeouts },
      { name: "b", base_url: b.url, priority: 0, timeouts },
    ],
    config,
  });
  return { a, b, h: harness };
}

const ask = { model: "gpt-test", messages: [{ role: "user" as const, content: "hi" }] };

describe("retries and failover", () => {
  test("a provider that answers 404 (it lacks the model) fails over at once, and all-404 is model_not_found", async () => {
    const { a, b, h } = twoProviders();
    a.enqueue({ kind: "http_error", status: 404, message: "The model gpt-test does not exist" });
    b.enqueue({ kind: "text", text: "from b" });
    const answer = await h.client.chat.completions.create(ask);
    expect(answer.choices[0]!.message.content).toBe("from b");
    expect(a.completionRequests()).toHaveLength(1);

    a.enqueue({ kind: "http_error", status: 404, message: "no such model" });
    b.enqueue({ kind: "http_error", status: 404, message: "no such model either" });
    const missing = (await h.client.chat.completions.create(ask).then(
      () => undefined,
      (error: unknown) => error,
    )) as { status: number; code: string; message: string };
    expect(missing).toMatchObject({ status: 404, code: "model_not_found" });
    expect(missing.message).toContain("404 from a, b");
  });

  test("429 with Retry-After: 1 is retried after the wait, at the same provider", async () => {
    const { a, h } = twoProviders();
    a.enqueue({ kind: "http_error", status: 429, headers: { "retry-after": "1" } }, { kind: "text", text: "after the wait" });
    const started = performance.now();
    const answer = await h.client.chat.completions.create(ask);
    const waited = performance.now() - started;
    expect(answer.choices[0]!.message.content).toBe("after the wait");
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(a.completionRequests()).toHaveLength(2);
    expect(h.events("upstream.error")[0]).toMatchObject({ provider: "a", status: 429, cause: "http_429" });
  });

  test("retry-after-ms is honoured too", async () => {
    const { a, h } = twoProviders();
    a.enqueue({ kind: "http_error", status: 503, headers: { "retry-after-ms": "150" } }, { kind: "text", text: "ok" });
    const started = performance.now();
    await h.client.chat.completions.create(ask);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  test("a Retry-After past the cap moves on to the next provider at once", async () => {
    const { a, b, h } = twoProviders({ retry_after_cap_ms: 1000 });
    a.enqueue({ kind: "http_error", status: 429, headers: { "retry-after": "120" } });
    b.enqueue({ kind: "text", text: "from b" });
    const { response } = await h.client.chat.completions.create(ask).withResponse();
    expect(response.headers.get("x-agentd-provider")).toBe("b");
    expect(a.completionRequests()).toHaveLength(1);
  });

  test("500 three times, then failover to the second provider", async () => {
    const { a, b, h } = twoProviders({ max_attempts: 3 });
    a.setDefault({ kind: "http_error", status: 500 });
    b.enqueue({ kind: "text", text: "from b" });
    const { data, response } = await h.client.chat.completions.create(ask).withResponse();
    expect(data.choices[0]!.message.content).toBe("from b");
    expect(response.headers.get("x-agentd-provider")).toBe("b");
    expect(a.completionRequests()).toHaveLength(3);
    expect(h.events("upstream.error").map((e) => [e.provider, e.cause])).toEqual([
      ["a", "http_5xx"],
      ["a", "http_5xx"],
      ["a", "http_5xx"],
    ]);
  });

  test("a stall before the first byte times out and fails over", async () => {
    const { a, b, h } = twoProviders({ max_attempts: 1 }, { first_byte_ms: 150, connect_ms: 5000 });
    a.enqueue({ kind: "stall_before_first_byte" });
    b.enqueue({ kind: "text", chunks: ["fine"] });
    const stream = await h.client.chat.completions.create({ ...ask, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("fine");
    expect(h.events("upstream.error")[0]).toMatchObject({ provider: "a", cause: "first_byte_timeout", status: 0 });
    await a.waitForDisconnect(0);
  });

  test.each([
    [{ first_byte_ms: 150, total_ms: 60_000 }, "first_byte_timeout"],
    [{ first_byte_ms: 60_000, total_ms: 150 }, "total_timeout"],
  ] as const)(
    "a non-streamed answer stalls: the earlier deadline (%o) fires as %s, and the next provider answers",
    async (timeouts, cause) => {
      const { a, b, h } = twoProviders({ max_attempts: 1 }, timeouts);
      a.enqueue({ kind: "stall_before_first_byte" });
      b.enqueue({ kind: "text", text: "from b" });
      const answer = await h.client.chat.completions.create(ask);
      expect(answer.choices[0]?.message.content).toBe("from b");
      expect(h.events("upstream.error")[0]).toMatchObject({ provider: "a", cause });
      await a.waitForDisconnect(0);
    },
  );

  test("a non-streamed deadline shorter than the client watch's start fires on time all the same", async () => {
    const { a, b, h } = twoProviders({ max_attempts: 1 }, { first_byte_ms: 10, total_ms: 60_000 });
    a.enqueue({ kind: "stall_before_first_byte" });
    b.enqueue({ kind: "text", text: "from b" });
    const answer = await h.client.chat.completions.create(ask);
    expect(answer.choices[0]?.message.content).toBe("from b");
    expect(h.events("upstream.error")[0]).toMatchObject({ provider: "a", cause: "first_byte_timeout" });
    await a.waitForDisconnect(0);
  });

  test("a stream that keeps sending past its total deadline is cut there with an error", async () => {
    const { a, h } = twoProviders({}, { total_ms: 300, idle_ms: 5_000 });
    a.enqueue({ kind: "text", chunks: Array.from({ length: 20 }, (_, i) => `t${i} `), chunkDelayMs: 50 });
    const stream = await h.client.chat.completions.create({ ...ask, stream: true });
    let text = "";
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    })().catch((e) => e);
    expect(text.startsWith("t0 ")).toBe(true);
    expect(text).not.toContain("t19");
    expect(String(error?.message)).toContain("total_timeout");
    expect(h.events("upstream.error")[0]).toMatchObject({ provider: "a", cause: "total_timeout" });
  });

  test("401 is not retried: the provider is marked auth_failed and the next one answers", async () => {
    const { a, b, h } = twoProviders();
    a.setDefault({ kind: "http_error", status: 401, message: "Incorrect API key provided" });
    b.enqueue({ kind: "text", text: "from b" });
    const answer = await h.client.chat.completions.create(ask);
    expect(answer.choices[0]!.message.content).toBe("from b");
    expect(a.completionRequests()).toHaveLength(1);
    expect(h.events("upstream.error")[0]).toMatchObject({ provider: "a", status: 401, cause: "auth" });
    expect(h.proxy.status().find((s) => s.name === "a")!.state).toBe("auth_failed");
    // The next request skips a altogether.
    await h.client.chat.completions.create(ask);
    expect(a.completionRequests()).toHaveLength(1);
  });

  test("when every provider rejects the key the client gets upstream_auth_failed", async () => {
    const { a, b, h } = twoProviders();
    a.setDefault({ kind: "http_error", status: 401 });
    b.setDefault({ kind: "http_error", status: 403 });
    const error = await h.client.chat.completions.create(ask).catch((e) => e);
    expect(error.status).toBe(502);
    expect(error.code).toBe("upstream_auth_failed");
  });

  test("a malformed first event is retried before anything reaches the client", async () => {
    const { a, h } = twoProviders();
    a.enqueue({ kind: "malformed_chunk", afterEvents: 0, reply: { kind: "text", text: "x" } }, { kind: "text", chunks: ["good"] });
    const stream = await h.client.chat.completions.create({ ...ask, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("good");
    expect(h.events("upstream.error")[0]).toMatchObject({ provider: "a", cause: "malformed" });
  });

  test("a client 400 from the upstream is returned, not retried", async () => {
    const { a, b, h } = twoProviders();
    a.enqueue({
      kind: "http_error",
      status: 400,
      body: JSON.stringify({ error: { message: "messages must not be empty", param: "messages" } }),
    });
    const error = await h.client.chat.completions.create(ask).catch((e) => e);
    expect(error.status).toBe(400);
    expect(error.param).toBe("messages");
    expect(error.message).toContain("messages must not be empty");
    expect(a.completionRequests()).toHaveLength(1);
    expect(b.completionRequests()).toHaveLength(0);
  });
});

describe("failures after the stream began", () => {
  test("events that keep coming re-arm the idle timeout: a stream longer than it, with shorter gaps, completes", async () => {
    // Gaps a quarter of the idle time, so a loaded machine cannot stretch one past it; six of them outlast it.
    const { a, h } = twoProviders({}, { idle_ms: 400 });
    a.enqueue({ kind: "text", chunks: ["a", "b", "c", "d", "e", "f"], chunkDelayMs: 100 });
    const stream = await h.client.chat.completions.create({ ...ask, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("abcdef");
    expect(h.events("upstream.error")).toHaveLength(0);
  });

  test("a stall mid-stream hits the idle timeout: chat clients get an error, nothing hangs", async () => {
    const { a, h } = twoProviders({}, { idle_ms: 200 });
    a.enqueue({ kind: "stall_mid_stream", afterEvents: 2, reply: { kind: "text", chunks: ["part", "ial", "never"] } });
    const stream = await h.client.chat.completions.create({ ...ask, stream: true });
    let text = "";
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    })().catch((e) => e);
    expect(text).toBe("part");
    expect(String(error?.message)).toContain("idle_timeout");
    expect(h.events("upstream.error")[0]).toMatchObject({ provider: "a", cause: "idle_timeout" });
    await a.waitForDisconnect(0);
  });

  test("a stall mid-stream ends a Responses stream with response.failed", async () => {
    const { a, h } = twoProviders({}, { idle_ms: 200 });
    a.enqueue({ kind: "stall_mid_stream", afterEvents: 2, reply: { kind: "text", chunks: ["part", "ial"] } });
    const response = await fetch(`${h.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-test", input: "x", stream: true }),
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).toContain("event: response.output_text.delta");
    expect(text).toContain("event: response.failed");
    expect(text).toContain('"code":"upstream_timeout"');
    expect(text).not.toContain("response.completed");
  });

  test("a connection reset mid-stream ends the stream with an error, and is logged as reset", async () => {
    const { a, h } = twoProviders();
    a.enqueue({ kind: "reset_mid_stream", afterEvents: 2, reply: { kind: "text", chunks: ["one", "two", "three"], chunkDelayMs: 5 } });
    const stream = await h.client.chat.completions.create({ ...ask, stream: true });
    const error = await (async () => {
      for await (const _chunk of stream);
    })().catch((e) => e);
    expect(String(error?.message)).toContain("reset");
    expect(h.events("upstream.error")[0]).toMatchObject({ provider: "a", cause: "reset" });
  });

  test("a malformed chunk mid-stream ends the stream with an error event", async () => {
    const { a, h } = twoProviders();
    a.enqueue({ kind: "malformed_chunk", afterEvents: 2, reply: { kind: "text", chunks: ["one", "two"] } });
    const events: any[] = [];
    // response.failed, then an `error` event, which the SDK raises as its own APIError.
    const thrown = await (async () => {
      for await (const event of await h.client.responses.create({ model: "gpt-test", input: "x", stream: true })) events.push(event);
    })().catch((e) => e);
    expect(thrown).toBeInstanceOf(OpenAI.APIError);
    expect(thrown.code).toBe("upstream_error");
    const final = events.find((e) => e.type === "response.failed").response;
    expect(final.status).toBe("failed");
    expect(final.error?.code).toBe("upstream_error");
    expect(final.output[0].content[0].text).toBe("one");
    expect(h.events("upstream.error")[0]).toMatchObject({ provider: "a", cause: "malformed" });
  });

  test("a stream that ends without finishing is an error, not a silent 200", async () => {
    const { a, h } = twoProviders();
    a.enqueue({
      kind: "raw",
      status: 200,
      headers: { "content-type": "text/event-stream" },
      body: 'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":"cut"},"finish_reason":null}]}\n\n',
    });
    const response = await fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...ask, stream: true }),
    });
    const text = await response.text();
    expect(text).toContain('"code":"upstream_error"');
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  test("a client that disconnects aborts the upstream request", async () => {
    const { a, h } = twoProviders();
    a.enqueue({ kind: "stall_mid_stream", afterEvents: 2, reply: { kind: "text", chunks: ["a", "b"] } });
    const controller = new AbortController();
    const response = await fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...ask, stream: true }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await a.waitForDisconnect(0);
    await waitFor("the client_gone record", () => h.events("proxy.request").some((e) => e.outcome === "client_gone"), {
      timeoutMs: 3000,
      intervalMs: 2,
    });
  });

  test("a client that disconnects while the proxy waits for the first byte aborts the upstream too", async () => {
    const { a, h } = twoProviders();
    a.enqueue({ kind: "stall_before_first_byte" });
    const controller = new AbortController();
    const pending = fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...ask, stream: true }),
      signal: controller.signal,
    }).catch((e) => e);
    await a.waitForRequests(1);
    controller.abort();
    await pending;
    await a.waitForDisconnect(0);
  });
  test("a client that leaves a non-streamed call the proxy still waits on aborts the upstream long before its deadline", async () => {
    const { a, h } = twoProviders({ max_attempts: 1 }, { first_byte_ms: 10_000, total_ms: 60_000 });
    a.enqueue({ kind: "stall_before_first_byte" });
    const controller = new AbortController();
    const pending = fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(ask),
      signal: controller.signal,
    }).catch((e) => e);
    await a.waitForRequests(1);
    controller.abort();
    await pending;
    // Within a fifth of the deadline: the call follows its client, it does not wait the deadline out.
    await a.waitForDisconnect(0, 2000);
    await waitFor("the client_gone record", () => h.events("proxy.request").some((e) => e.outcome === "client_gone"), {
      timeoutMs: 3000,
      intervalMs: 2,
    });
    expect(h.events("upstream.error")).toEqual([]);
  });
});

describe("circuit breaker", () => {
  test("opens after N failures, skips the provider, half-opens after the cooldown and closes on success", async () => {
    const { a, b, h } = twoProviders({ max_attempts: 1, breaker: { failures: 2, window_ms: 60_000, cooldown_5xx_ms: 300 } });
    a.enqueue({ kind: "http_error", status: 502 }, { kind: "http_error", status: 502 });
    await h.client.chat.completions.create(ask);
    await h.client.chat.completions.create(ask);
    expect(h.events("breaker.open")[0]).toMatchObject({ provider: "a", cause: "http_5xx", cooldown_ms: 300 });
    expect(h.proxy.status().find((s) => s.name === "a")!.state).toBe("open");
    expect(h.proxy.healthChecks()[0]).toMatchObject({ key: "proxy:providers", status: "warn" });
    await h.client.chat.completions.create(ask);
    expect(a.completionRequests()).toHaveLength(2);
    await waitFor("half-open", () => h.proxy.status().find((s) => s.name === "a")!.state === "half_open", {
      timeoutMs: 3000,
      intervalMs: 2,
    });
    expect(h.events("breaker.half_open")).toHaveLength(1);
    const { response } = await h.client.chat.completions.create(ask).withResponse();
    expect(response.headers.get("x-agentd-provider")).toBe("a");
    expect(h.events("breaker.close")).toHaveLength(1);
    expect(b.completionRequests()).toHaveLength(3);
  });

  test("with every breaker open the proxy answers 503 at once and health fails", async () => {
    const { a, b, h } = twoProviders({ max_attempts: 1, breaker: { failures: 1, cooldown_5xx_ms: 60_000 } });
    a.setDefault({ kind: "http_error", status: 500 });
    b.setDefault({ kind: "http_error", status: 500 });
    await h.client.chat.completions.create(ask).catch(() => {});
    const error = await h.client.chat.completions.create(ask).catch((e) => e);
    expect(error.status).toBe(503);
    expect(error.code).toBe("upstream_unavailable");
    expect(h.proxy.healthChecks()[0]!.status).toBe("fail");
  });
});
