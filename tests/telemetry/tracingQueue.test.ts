import { afterAll, describe, expect, test } from "bun:test";
import { importLine, runProbeScript } from "../support/probeScript.ts";
import { removeTempDirs } from "../support/tempDir.ts";
import { createLogger } from "../../src/core/log/index.ts";
import { startTracing } from "../../src/telemetry/index.ts";
import { telemetryConfigSchema } from "../../src/core/config/sections/telemetryConfig.ts";
import { freePort } from "./support/monitoringServers.ts";
import { waitFor } from "../support/waitFor.ts";
import { renderPrometheus } from "../../src/core/metrics/index.ts";

afterAll(() => removeTempDirs());

function count(metrics: string, series: string): number {
  const line = metrics.split("\n").find((l) => l.startsWith(`${series} `));
  if (!line) throw new Error(`no ${series} in:\n${metrics}`);
  return Number(line.slice(series.length + 1));
}

describe("tracing off and on", () => {
  test("off, the worker and the supervisor do not even load the OTLP exporter", async () => {
    const result = await runProbeScript<{ enabled: boolean; loaded: string[]; modules: number }>([
      importLine("src/daemon/workerApp.ts"),
      importLine("src/daemon/supervisor.ts"),
      importLine("src/telemetry/index.ts", "{ startTracing }"),
      importLine("src/core/config/sections/telemetryConfig.ts", "{ telemetryConfigSchema }"),
      importLine("src/core/log/index.ts", "{ createLogger }"),
      `const tracing = await startTracing(telemetryConfigSchema().parse({}), "worker", createLogger("probe"));`,
      "const loaded = Object.keys(require.cache).filter((k) => k.includes('@opentelemetry') || /telemetry\\/(otlp|spanBatch)/.test(k));",
      "console.log(JSON.stringify({ enabled: tracing.tracer.enabled, loaded, modules: Object.keys(require.cache).length }));",
    ]);
    expect(result.modules).toBeGreaterThan(50);
    expect(result).toMatchObject({ enabled: false, loaded: [] });
  });

  test("the supervisor does not load zod: its config comes as plain JSON and tier 3's answer is checked by hand", async () => {
    const result = await runProbeScript<{ loaded: string[]; modules: number }>([
      importLine("src/daemon/supervisor.ts"),
      "const loaded = Object.keys(require.cache).filter((k) => k.includes('/zod/'));",
      "console.log(JSON.stringify({ loaded, modules: Object.keys(require.cache).length }));",
    ]);
    expect(result.modules).toBeGreaterThan(50);
    expect(result.loaded).toEqual([]);
  });

  test("a collector that is down: spans past the queue bound are dropped and counted, the rest fail to export and are counted", async () => {
    const config = telemetryConfigSchema().parse({
      otlp: { endpoint: `http://127.0.0.1:${freePort()}`, max_queue_size: 4, scheduled_delay_ms: 60_000, timeout_ms: 1000 },
    });
    const tracing = await startTracing(config, "test", createLogger("test"));
    expect(tracing.tracer.enabled).toBe(true);
    // Ending a span never waits for the network: the loop runs without awaiting anything, and the
    // counts below are read before any network turn could have happened.
    for (let i = 0; i < 20; i++) tracing.tracer.startSpan(`span ${i}`).end();
    // At most the queue (4) plus the one batch being exported (4) are held; the rest are counted.
    const queueFull = count(renderPrometheus(tracing.metricFamilies()), 'agentd_telemetry_spans_dropped_total{reason="queue_full"}');
    expect(queueFull).toBeGreaterThanOrEqual(12);
    await tracing.shutdown();
    // Every span is accounted for: dropped at the queue, or lost with the export that failed (the
    // first batch's export may still be retrying when shutdown has flushed the rest).
    const failed = await waitFor("every export to fail", () => {
      const value = count(renderPrometheus(tracing.metricFamilies()), 'agentd_telemetry_spans_dropped_total{reason="export_failed"}');
      return value === 20 - queueFull ? value : undefined;
    });
    expect(failed).toBe(20 - queueFull);
    expect(count(renderPrometheus(tracing.metricFamilies()), "agentd_telemetry_spans_exported_total")).toBe(0);
  });
});
