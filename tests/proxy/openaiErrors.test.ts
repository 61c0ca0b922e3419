import { afterEach, describe, expect, test } from "bun:test";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { startProxy, type ProxyHarness } from "./proxyHarness.ts";

/** Final failures reach the client as OpenAI sends them: status, type, code and the headers SDKs read. */

let upstreams: ScriptedUpstream[] = [];
let harness: ProxyHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await Promise.all(upstreams.map((u) => u.close()));
  upstreams = [];
});

function setup(count: number, config: Record<string, unknown> = {}) {
  upstreams = Array.from({ length: count }, () => startScriptedUpstream());
  harness = startProxy({ providers: upstreams.map((u, i) => ({ name: `p${i}`, base_url: u.url, priority: 10 - i })), config });
  return { ups: upstreams, h: harness };
}

async function post(h: ProxyHarness, body: unknown, path = "/v1/chat/completions") {
  const response = await fetch(h.url + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { response, body: (await response.json()) as { error: Record<string, unknown> } };
}

const ask = { model: "gpt-test", messages: [{ role: "user", content: "hi" }] };

describe("errors as OpenAI sends them", () => {
  test("every provider rate-limited: 429 rate_limit_exceeded with the upstream's Retry-After", async () => {
    const { ups, h } = setup(2, { retry_after_cap_ms: 1000 });
    ups[0]!.setDefault({ kind: "http_error", status: 429, headers: { "retry-after": "30" } });
    ups[1]!.setDefault({ kind: "http_error", status: 429, headers: { "retry-after": "7" } });
    const { response, body } = await post(h, ask);
    expect(response.status).toBe(429);
    expect(body.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded", param: null });
    expect(response.headers.get("retry-after")).toBe("7");
    expect(response.headers.get("x-agentd-provider")).toBe("p1");
    expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    expect(response.headers.get("x-should-retry")).toBeNull();
  });

  test("429 after agentd's own retries, with no Retry-After from the upstream: still 429, with one", async () => {
    const { ups, h } = setup(1, { max_attempts: 2 });
    ups[0]!.setDefault({ kind: "http_error", status: 429 });
    const { response, body } = await post(h, { ...ask, stream: true });
    expect(response.status).toBe(429);
    expect(body.error.code).toBe("rate_limit_exceeded");
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(ups[0]!.completionRequests()).toHaveLength(2);
  });

  test("every breaker open: 503 server_error with Retry-After until the first half-open", async () => {
    const { ups, h } = setup(2, { max_attempts: 1, breaker: { failures: 1, cooldown_5xx_ms: 20_000 } });
    for (const up of ups) up.setDefault({ kind: "http_error", status: 500 });
    await post(h, ask);
    const { response, body } = await post(h, { model: "gpt-test", input: "x" }, "/v1/responses");
    expect(response.status).toBe(503);
    expect(body.error).toMatchObject({ type: "server_error", code: "upstream_unavailable" });
    const wait = Number(response.headers.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(19);
    expect(wait).toBeLessThanOrEqual(20);
    expect(response.headers.get("x-agentd-provider")).toBeNull();
    expect(response.headers.get("x-request-id")).toStartWith("req_");
  });

  test("5xx until agentd gives up: 502 server_error naming the provider", async () => {
    const { ups, h } = setup(1, { max_attempts: 2 });
    ups[0]!.setDefault({ kind: "http_error", status: 500 });
    const { response, body } = await post(h, { model: "gpt-test", input: "x" }, "/v1/responses");
    expect(response.status).toBe(502);
    expect(body.error).toMatchObject({ type: "server_error", code: "upstream_error" });
    expect(response.headers.get("x-agentd-provider")).toBe("p0");
    expect(response.headers.get("retry-after")).toBeNull();
  });

  test("the upstream rejects agentd's key: 502 upstream_auth_failed, and the client is told not to retry", async () => {
    const { ups, h } = setup(1);
    ups[0]!.setDefault({ kind: "http_error", status: 403, message: "forbidden" });
    const { response, body } = await post(h, ask);
    expect(response.status).toBe(502);
    expect(body.error).toMatchObject({ type: "server_error", code: "upstream_auth_failed" });
    expect(response.headers.get("x-should-retry")).toBe("false");
    expect(response.headers.get("x-agentd-provider")).toBe("p0");
  });

  for (const upstream_client of ["auto", "fetch"] as const) {
    test(`a provider answering with a redirect is not followed: the next provider answers, or a 502 names where it points (${upstream_client})`, async () => {
      const moved = { kind: "http_error", status: 308, headers: { location: "https://moved.invalid/v1/chat/completions" } } as const;
      const two = setup(2, { upstream_client });
      two.ups[0]!.setDefault(moved);
      const answered = await post(two.h, ask);
      expect(answered.response.status).toBe(200);
      expect(answered.response.headers.get("x-agentd-provider")).toBe("p1");
      // Not asked again: the same address gets the same redirect.
      expect(two.ups[0]!.completionRequests()).toHaveLength(1);
      await harness?.close();
      await Promise.all(upstreams.map((u) => u.close()));

      const { ups, h } = setup(1, { max_attempts: 3, upstream_client });
      ups[0]!.setDefault(moved);
      const { response, body } = await post(h, ask);
      expect(response.status).toBe(502);
      expect(body.error).toMatchObject({ type: "server_error", code: "upstream_error" });
      expect(body.error.message).toContain("redirect to https://moved.invalid/v1/chat/completions, which agentd does not follow");
      expect(response.headers.get("location")).toBeNull();
      expect(ups[0]!.completionRequests()).toHaveLength(1);
    });
  }

  test("a request refused before any provider is tried still carries x-request-id", async () => {
    const { h } = setup(1);
    const { response, body } = await post(h, { model: "gpt-test" });
    expect(response.status).toBe(400);
    expect(body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_request", param: "messages" });
    expect(response.headers.get("x-request-id")).toStartWith("req_");
    expect(response.headers.get("x-agentd-provider")).toBeNull();
  });
});
