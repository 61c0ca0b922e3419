import type { TelemetryConfig } from "../core/config/sections/telemetryConfig.ts";
import type { Logger } from "../core/log/index.ts";
import { familiesText, CounterFamily, labelText } from "../core/metrics/index.ts";
import type { SpanCounts } from "./spanBatch.ts";
import { NOOP_TRACER, type Tracer } from "./tracer.ts";

/** Tracing as a process runs it: a tracer (the no-op one when off), its counters, its shutdown. */
export interface Tracing {
  tracer: Tracer;
  /** Prometheus text of the span counters; empty when tracing is off. */
  metricsText(): string;
  /** Exports what is queued, then stops; bounded by the export timeout. Safe to call twice. */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { tracer: NOOP_TRACER, metricsText: () => "", shutdown: async () => undefined };

/**
 * Starts tracing when `telemetry.otlp.endpoint` is set. Off, the exporter is not even loaded: it
 * comes in by dynamic import, so a daemon without a collector pays nothing.
 */
export async function startTracing(config: TelemetryConfig, processName: string, logger: Logger): Promise<Tracing> {
  const endpoint = config.otlp.endpoint;
  if (!endpoint) return OFF;
  const { startOtlpTracing, tracesUrl } = await import("./otlpTracing.ts");
  const otlp = startOtlpTracing({ ...config.otlp, endpoint }, processName);
  logger.info("telemetry.tracing_started", { endpoint: tracesUrl(endpoint), process: processName });
  let stopped: Promise<void> | undefined;
  return {
    tracer: otlp.tracer,
    metricsText: () => spanCountsText(otlp.counts),
    shutdown: () => {
      stopped ??= otlp.shutdown().catch((error: unknown) => logger.warn("telemetry.shutdown_failed", { error }));
      return stopped;
    },
  };
}

function spanCountsText(counts: SpanCounts): string {
  const exported = new CounterFamily("agentd_telemetry_spans_exported_total", "Spans the OTLP collector accepted.");
  exported.set("", counts.exported);
  const dropped = new CounterFamily(
    "agentd_telemetry_spans_dropped_total",
    "Spans dropped: the export queue was full, or the collector did not take them.",
  );
  dropped.set(labelText({ reason: "queue_full" }), counts.dropped_queue_full);
  dropped.set(labelText({ reason: "export_failed" }), counts.dropped_export_failed);
  return familiesText([exported, dropped]);
}
