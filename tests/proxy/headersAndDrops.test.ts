import { describe, expect, test } from "bun:test";
import { ProxyMetrics } from "../../src/proxy/state/proxyMetrics.ts";
import { applyQuirks } from "../../src/proxy/upstream/quirkRules.ts";
import { passedResponseHeaders, upstreamRequestHeaders } from "../../src/proxy/upstream/upstreamHeaders.ts";
import { renderPrometheus } from "../../src/core/metrics/index.ts";

describe("headers", () => {
  test("client session and tracing headers pass by allow-list; authorization and cookies never do", () => {
    const client = new Headers({
      authorization: "Bearer agentd-token",
      cookie: "agentd=1",
      "session-id": "s",
      session_id: "s2",
      "thread-id": "t",
      "x-client-request-id": "r",
      "x-codex-turn-metadata": "m",
      "x-codex-beta-features": "b",
      traceparent: "tp",
      "openai-organization": "org",
      "openai-project": "proj",
      "x-stainless-lang": "js",
      connection: "keep-alive",
      "x-forwarded-for": "10.0.0.1",
      host: "127.0.0.1",
    });
    expect(upstreamRequestHeaders(client, "up-key", true)).toEqual({
      "content-type": "application/json",
      accept: "text/event-stream",
      authorization: "Bearer up-key",
      "session-id": "s",
      session_id: "s2",
      "thread-id": "t",
      "x-client-request-id": "r",
      "x-codex-turn-metadata": "m",
      "x-codex-beta-features": "b",
      traceparent: "tp",
      "openai-organization": "org",
      "openai-project": "proj",
      "x-stainless-lang": "js",
    });
    expect(upstreamRequestHeaders(client, undefined, false).authorization).toBeUndefined();
  });

  test("upstream response headers are relayed except hop-by-hop ones, cookies and body framing", () => {
    const upstream = new Headers({
      "x-request-id": "req_1",
      "x-ratelimit-remaining-tokens": "10",
      "openai-processing-ms": "12",
      "retry-after": "1",
      "x-vendor": "v",
      connection: "close",
      "keep-alive": "timeout=5",
      "transfer-encoding": "chunked",
      "set-cookie": "s=1",
      "content-length": "10",
      "content-encoding": "gzip",
      "content-type": "application/json",
      "x-agentd-provider": "spoofed",
    });
    const into: Record<string, string> = {};
    passedResponseHeaders(upstream, into);
    expect(into).toEqual({
      "x-request-id": "req_1",
      "x-ratelimit-remaining-tokens": "10",
      "openai-processing-ms": "12",
      "retry-after": "1",
      "x-vendor": "v",
    });
  });
});

describe("drop reporting", () => {
  test("applying quirks names the parameters the body carried and lost", () => {
    const body: Record<string, unknown> = { model: "m", seed: 1, verbosity: "low", max_completion_tokens: 9 };
    expect(applyQuirks(body, ["seed", "verbosity", "store", "max_completion_tokens"])).toEqual(["seed", "verbosity"]);
    expect(body).toEqual({ model: "m", max_tokens: 9 });
  });

  test("the dropped-fields counter is in the metrics text by field", () => {
    const metrics = new ProxyMetrics();
    metrics.droppedField("seed");
    metrics.droppedField("seed");
    metrics.droppedField("tools.web_search");
    const text = renderPrometheus(metrics.families());
    expect(text).toContain("# TYPE agentd_proxy_dropped_fields_total counter");
    expect(text).toContain('agentd_proxy_dropped_fields_total{field="seed"} 2');
    expect(text).toContain('agentd_proxy_dropped_fields_total{field="tools.web_search"} 1');
  });
});
