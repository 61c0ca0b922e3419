import { describe, expect, test } from "bun:test";
import { ProxyMetrics, type Outcome } from "../../src/proxy/state/proxyMetrics.ts";
import { renderPrometheus } from "../../src/core/metrics/index.ts";

const line = (text: string, prefix: string) => text.split("\n").find((l) => l.startsWith(prefix));

/** A request on /v1/chat/completions answered 200 (or 502 when it failed) in one attempt. */
function request(
  metrics: ProxyMetrics,
  ...[provider, model, outcome, totalMs, ttftMs, tokensIn, tokensOut]: [string, string, Outcome, number, number | undefined, number, number]
): void {
  metrics.request({
    provider,
    model,
    route: "/v1/chat/completions",
    operation: "chat",
    status: outcome === "ok" ? 200 : 502,
    outcome,
    totalMs,
    ttftMs,
    tokensIn,
    tokensOut,
    attempts: 1,
    failoverFrom: undefined,
  });
}

describe("ProxyMetrics", () => {
  test("counts requests and tokens per provider, model and outcome, with label values escaped", () => {
    const metrics = new ProxyMetrics();
    request(metrics, "p", 'm"1', "ok", 20, 5, 10, 2);
    request(metrics, "p", 'm"1', "ok", 30, undefined, 1, 0);
    request(metrics, "p", 'm"1', "error", 1, undefined, 0, 0);
    const text = renderPrometheus(metrics.families());
    expect(line(text, 'agentd_proxy_requests_total{provider="p",model="m\\"1",outcome="ok"}')).toEndWith(" 2");
    expect(line(text, 'agentd_proxy_requests_total{provider="p",model="m\\"1",outcome="error"}')).toEndWith(" 1");
    expect(line(text, 'agentd_proxy_tokens_total{provider="p",model="m\\"1",direction="in"}')).toEndWith(" 11");
    expect(line(text, 'agentd_proxy_request_duration_seconds_count{provider="p"}')).toEndWith(" 3");
    expect(line(text, 'agentd_proxy_ttft_seconds_count{provider="p"}')).toEndWith(" 1");
  });

  test("past the series cap new models count as 'other' while models already seen keep their own series", () => {
    const metrics = new ProxyMetrics();
    for (let i = 0; i < 2000; i++) request(metrics, "p", `model-${i}`, "ok", 1, undefined, 0, 0);
    request(metrics, "p", "late-a", "ok", 1, undefined, 0, 0);
    request(metrics, "p", "late-b", "ok", 1, undefined, 0, 0);
    request(metrics, "p", "model-7", "ok", 1, undefined, 0, 0);
    const text = renderPrometheus(metrics.families());
    expect(line(text, 'agentd_proxy_requests_total{provider="p",model="other",outcome="ok"}')).toEndWith(" 2");
    expect(line(text, 'agentd_proxy_requests_total{provider="p",model="model-7",outcome="ok"}')).toEndWith(" 2");
    expect(text).not.toContain("late-a");
  });
});
