import { describe, expect, test } from "bun:test";
import { ProxyMetrics } from "../../src/proxy/state/proxyMetrics.ts";

const line = (text: string, prefix: string) => text.split("\n").find((l) => l.startsWith(prefix));

describe("ProxyMetrics", () => {
  test("counts requests and tokens per provider, model and outcome, with label values escaped", () => {
    const metrics = new ProxyMetrics();
    metrics.request("p", 'm"1', "ok", 20, 5, 10, 2);
    metrics.request("p", 'm"1', "ok", 30, undefined, 1, 0);
    metrics.request("p", 'm"1', "error", 1, undefined, 0, 0);
    const text = metrics.text();
    expect(line(text, 'agentd_proxy_requests_total{provider="p",model="m\\"1",outcome="ok"}')).toEndWith(" 2");
    expect(line(text, 'agentd_proxy_requests_total{provider="p",model="m\\"1",outcome="error"}')).toEndWith(" 1");
    expect(line(text, 'agentd_proxy_tokens_total{provider="p",model="m\\"1",direction="in"}')).toEndWith(" 11");
    expect(line(text, 'agentd_proxy_request_duration_seconds_count{provider="p"}')).toEndWith(" 3");
    expect(line(text, 'agentd_proxy_ttft_seconds_count{provider="p"}')).toEndWith(" 1");
  });

  test("past the series cap new models count as 'other' while models already seen keep their own series", () => {
    const metrics = new ProxyMetrics();
    for (let i = 0; i < 2000; i++) metrics.request("p", `model-${i}`, "ok", 1, undefined, 0, 0);
    metrics.request("p", "late-a", "ok", 1, undefined, 0, 0);
    metrics.request("p", "late-b", "ok", 1, undefined, 0, 0);
    metrics.request("p", "model-7", "ok", 1, undefined, 0, 0);
    const text = metrics.text();
    expect(line(text, 'agentd_proxy_requests_total{provider="p",model="other",outcome="ok"}')).toEndWith(" 2");
    expect(line(text, 'agentd_proxy_requests_total{provider="p",model="model-7",outcome="ok"}')).toEndWith(" 2");
    expect(text).not.toContain("late-a");
  });
});
