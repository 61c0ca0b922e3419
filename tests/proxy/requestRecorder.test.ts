import { describe, expect, test } from "bun:test";
import type { LogFields, Logger } from "../../src/core/log/index.ts";
import { ProxyMetrics } from "../../src/proxy/state/proxyMetrics.ts";
import { type RequestOutcome, RequestRecorder } from "../../src/proxy/state/requestRecorder.ts";
import { RollupBuffer } from "../../src/proxy/state/rollupBuffer.ts";
import { LatencyWindow } from "../../src/proxy/upstream/latencyWindow.ts";
import type { ProviderRuntime } from "../../src/proxy/upstream/providerRuntime.ts";

type Line = { level: string; event: string; fields: LogFields | undefined };

function capturingLogger(lines: Line[]): Logger {
  const logger: Logger = {
    debug: (event, fields) => lines.push({ level: "debug", event, fields }),
    info: (event, fields) => lines.push({ level: "info", event, fields }),
    warn: (event, fields) => lines.push({ level: "warn", event, fields }),
    error: (event, fields) => lines.push({ level: "error", event, fields }),
    child: () => logger,
  };
  return logger;
}

function rig() {
  const lines: Line[] = [];
  const metrics = new ProxyMetrics();
  const rollups = new RollupBuffer();
  const recorder = new RequestRecorder(capturingLogger(lines), metrics, rollups);
  const provider = { name: "up", latency: new LatencyWindow() } as unknown as ProviderRuntime;
  const requests = () => metrics.families().find((f) => f.name === "agentd_proxy_requests_total")!.samples;
  return { lines, metrics, recorder, provider, requests };
}

function outcome(provider: ProviderRuntime, model: string, extra: Partial<RequestOutcome> = {}): RequestOutcome {
  return { provider, model, outcome: "ok", status: 200, totalMs: 12.3456, tokensIn: 5, tokensOut: 7, attempts: 1, ...extra };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("request recorder", () => {
  test("requests finished in one turn are counted together on the next: log lines, metrics, latency", async () => {
    const { lines, recorder, provider, requests } = rig();
    recorder.record(outcome(provider, "a"));
    recorder.record(outcome(provider, "b", { outcome: "error", status: 502 }));
    expect(lines).toEqual([]);
    expect(provider.latency.percentile(50)).toBeUndefined();
    await nextTurn();
    expect(lines.map((l) => [l.event, l.fields?.model, l.fields?.status, l.fields?.total_ms])).toEqual([
      ["proxy.request", "a", 200, 12.35],
      ["proxy.request", "b", 502, 12.35],
    ]);
    expect(requests().map((s) => [s.labels?.model, s.labels?.outcome, s.value])).toEqual([
      ["a", "ok", 1],
      ["b", "error", 1],
    ]);
    // Only an answered request is a latency sample.
    expect(provider.latency.percentile(50)).toBe(12.3456);
  });

  test("flush counts what is pending at once, and only once", async () => {
    const { lines, recorder, provider, requests } = rig();
    recorder.record(outcome(provider, "a"));
    recorder.flush();
    expect(lines.map((l) => l.fields?.model)).toEqual(["a"]);
    await nextTurn();
    expect(lines).toHaveLength(1);
    expect(requests()[0]!.value).toBe(1);
  });

  test("a request that cannot be counted is logged as such, and the others in its batch are still counted", async () => {
    const { lines, recorder, provider } = rig();
    const broken = {
      name: "broken",
      get latency(): LatencyWindow {
        throw new Error("no latency window");
      },
    } as unknown as ProviderRuntime;
    recorder.record(outcome(broken, "x"));
    recorder.record(outcome(provider, "y"));
    await nextTurn();
    expect(lines.map((l) => [l.level, l.event, l.fields?.model])).toEqual([
      ["info", "proxy.request", "x"],
      ["error", "proxy.request_uncounted", "x"],
      ["info", "proxy.request", "y"],
    ]);
    expect(provider.latency.percentile(50)).toBe(12.3456);
  });

  test("a traced request's span ends when it is recorded, not when it is counted", () => {
    const { recorder, provider } = rig();
    const ended: unknown[] = [];
    const attributes: Record<string, unknown>[] = [];
    const span = {
      traceparent: () => undefined,
      setAttributes: (a: Record<string, unknown>) => attributes.push(a),
      end: (error?: unknown) => ended.push(error),
    };
    recorder.record(
      outcome(provider, "a", {
        outcome: "client_gone",
        trace: { route: "/v1/chat/completions", operation: "chat", span, recording: true, firstProvider: "first" },
      }),
    );
    expect(ended).toEqual([{ type: "client_gone" }]);
    expect(attributes[0]).toMatchObject({ "gen_ai.provider.name": "up", "agentd.proxy.failover_from": "first" });
    recorder.flush();
  });
});
