import { afterEach, describe, expect, test } from "bun:test";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";
import { renderPrometheus } from "../../src/core/metrics/index.ts";

let upstreams: ScriptedUpstream[] = [];
let harness: ProxyHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await Promise.all(upstreams.map((u) => u.close()));
  upstreams = [];
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("proxy surface", () => {
  test("no provider configured: every /v1 call is a 503 that says how to add one", async () => {
    harness = startProxy({ providers: [] });
    for (const [method, path] of [
      ["POST", "/v1/chat/completions"],
      ["POST", "/v1/responses"],
      ["GET", "/v1/models"],
    ] as const) {
      const response = await fetch(`${harness.url}${path}`, { method, ...(method === "POST" ? { body: "{}" } : {}) });
      expect(response.status).toBe(503);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("no_provider");
      expect(body.error.message).toContain(
        '"providers": [{"name": "openai", "base_url": "https://api.openai.com/v1", "api_key": "{env:OPENAI_API_KEY}"}]',
      );
      expect(body.error.message).toContain("OPENAI_API_KEY");
    }
    expect(harness.proxy.healthChecks()[0]).toMatchObject({ key: "proxy:providers", status: "pass", observedValue: 0 });
    expect(harness.proxy.healthChecks()[0]!.output).toContain("no provider configured");
  });

  test("a body over the limit is refused with 413 before reaching any upstream", async () => {
    const up = startScriptedUpstream();
    upstreams = [up];
    harness = startProxy({ providers: [{ name: "up", base_url: up.url }], config: { max_body_bytes: 1024 } });
    const response = await post(`${harness.url}/v1/chat/completions`, {
      model: "gpt-test",
      messages: [{ role: "user", content: "x".repeat(4096) }],
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("body_too_large");
    expect(up.completionRequests()).toHaveLength(0);
  });

  test("a chunked body (no Content-Length) is limited while it is read: over → 413, under → proxied", async () => {
    const up = startScriptedUpstream();
    upstreams = [up];
    harness = startProxy({ providers: [{ name: "up", base_url: up.url }], config: { max_body_bytes: 1024 } });
    const chunked = (text: string) => {
      const bytes = new TextEncoder().encode(text);
      // Several pieces, so the limit is crossed part-way through the read.
      const pieces = [bytes.subarray(0, 300), bytes.subarray(300, 700), bytes.subarray(700)];
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          const piece = pieces.shift();
          if (piece) controller.enqueue(piece);
          else controller.close();
        },
      });
    };
    const send = (content: string) =>
      fetch(`${harness!.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: chunked(JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content }] })),
      });
    const over = await send("x".repeat(4096));
    expect(over.status).toBe(413);
    expect(((await over.json()) as { error: { code: string } }).error.code).toBe("body_too_large");
    expect(up.completionRequests()).toHaveLength(0);
    const under = await send("small");
    expect(under.status).toBe(200);
    expect(up.completionRequests()).toHaveLength(1);
  });

  test("invalid JSON is a 400 invalid_json", async () => {
    const up = startScriptedUpstream();
    upstreams = [up];
    harness = startProxy({ providers: [{ name: "up", base_url: up.url }] });
    const response = await post(`${harness.url}/v1/chat/completions`, "{nope");
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_json");
  });

  test("GET /v1/models is the union of names, aliases and the upstream's models matching globs", async () => {
    const a = startScriptedUpstream({ models: ["llama-3-70b", "llama-3-8b", "mistral-large"] });
    const b = startScriptedUpstream();
    upstreams = [a, b];
    harness = startProxy({
      providers: [
        { name: "a", base_url: a.url, models: ["llama-*"] },
        { name: "b", base_url: `${b.url}/chat/completions`, models: ["gpt-4o"], aliases: { fast: "gpt-4o-mini" } },
      ],
    });
    const list = await harness.client.models.list();
    expect(list.data.map((m) => m.id).sort()).toEqual(["fast", "gpt-4o", "llama-3-70b", "llama-3-8b"]);
  });

  test("a doubled endpoint in base_url is normalised, identity headers pass and hop-by-hop ones do not", async () => {
    const up = startScriptedUpstream();
    upstreams = [up];
    harness = startProxy({ providers: [{ name: "up", base_url: `${up.url}/chat/completions/`, api_key: "sk-provider" }] });
    await post(
      `${harness.url}/v1/chat/completions`,
      { model: "gpt-test", messages: [] },
      {
        "user-agent": "codex/1.0",
        "x-stainless-lang": "js",
        authorization: "Bearer agentd-token",
        "proxy-authorization": "x",
        "x-custom-secret": "s",
      },
    );
    const sent = up.completionRequests()[0]!;
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.headers["user-agent"]).toBe("codex/1.0");
    expect(sent.headers["x-stainless-lang"]).toBe("js");
    expect(sent.headers.authorization).toBe("Bearer sk-provider");
    expect(sent.headers["proxy-authorization"]).toBeUndefined();
    expect(sent.headers["x-custom-secret"]).toBeUndefined();
  });

  test("metrics text counts requests by provider, model and outcome, with TTFT and tokens", async () => {
    const up = startScriptedUpstream();
    upstreams = [up];
    harness = startProxy({ providers: [{ name: "up", base_url: up.url }] });
    const stream = await harness.client.chat.completions.create({ model: "gpt-test", messages: [], stream: true });
    for await (const _ of stream);
    await harness.client.chat.completions.create({ model: "gpt-test", messages: [] });
    const text = renderPrometheus(harness.proxy.metricFamilies());
    expect(text).toContain("# TYPE agentd_proxy_requests_total counter");
    expect(text).toContain('agentd_proxy_requests_total{provider="up",model="gpt-test",outcome="ok"} 2');
    expect(text).toContain('agentd_proxy_tokens_total{provider="up",model="gpt-test",direction="in"} 10');
    expect(text).toContain('agentd_proxy_ttft_seconds_count{provider="up"} 1');
    expect(text).toContain('agentd_proxy_request_duration_seconds_count{provider="up"} 2');
  });

  test("rollups reach the store on close, per minute, provider and model", async () => {
    const up = startScriptedUpstream();
    upstreams = [up];
    harness = startProxy({ providers: [{ name: "up", base_url: up.url }] });
    await harness.client.chat.completions.create({ model: "gpt-test", messages: [] });
    await harness.client.chat.completions.create({ model: "gpt-test", messages: [] });
    expect(harness.db.query("SELECT count(*) AS n FROM proxy_rollups").get()).toEqual({ n: 0 });
    await harness.proxy.close();
    expect(harness.db.query("SELECT provider, model, requests, tokens_in, tokens_out FROM proxy_rollups").all()).toEqual([
      { provider: "up", model: "gpt-test", requests: 2, tokens_in: 10, tokens_out: 6 },
    ]);
  });
});

describe("admin routes", () => {
  test("open and close a breaker, raise a timeout within bounds", async () => {
    const a = startScriptedUpstream();
    const b = startScriptedUpstream();
    upstreams = [a, b];
    harness = startProxy({
      providers: [
        { name: "a", base_url: a.url, priority: 1, timeouts: { idle_ms: 1000 } },
        { name: "b", base_url: b.url },
      ],
    });
    const admin = `${harness.url}/api/admin/proxy`;
    const opened = await post(`${admin}/providers/a/breaker/open`, { cooldown_ms: 60_000, reason: "watchdog: repeated 5xx" });
    expect(opened.status).toBe(200);
    expect(((await opened.json()) as { state: string }).state).toBe("open");
    const { response } = await harness.client.chat.completions.create({ model: "gpt-test", messages: [] }).withResponse();
    expect(response.headers.get("x-agentd-provider")).toBe("b");
    await post(`${admin}/providers/a/breaker/close`, {});
    expect(harness.proxy.status().find((s) => s.name === "a")!.state).toBe("ok");

    const raised = (await (await post(`${admin}/providers/a/timeouts`, { idle_ms: 60_000, connect_ms: 1 })).json()) as {
      applied: Record<string, number>;
    };
    expect(raised.applied).toEqual({ idle_ms: 4000, connect_ms: 10_000 });
    expect(harness.proxy.status().find((s) => s.name === "a")!.timeouts.idle_ms).toBe(4000);
    expect(harness.events("proxy.admin").map((e) => e.action)).toEqual(["breaker_open", "breaker_close", "timeouts_raise"]);

    expect((await post(`${admin}/providers/nope/breaker/open`, {})).status).toBe(404);
    expect((await post(`${admin}/providers/a/timeouts`, { idle: 5 })).status).toBe(400);
  });
});
