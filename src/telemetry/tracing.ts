import type { TelemetryConfig } from "../core/config/sections/telemetryConfig.ts";
import type { Logger } from "../core/log/index.ts";
import type { MetricFamily } from "../core/metrics/index.ts";
import type { SpanCounts } from "./spanBatch.ts";
import { NOOP_TRACER, type Tracer } from "./tracer.ts";

/** Tracing as a process runs it: a tracer (the no-op one when off), its counters, its shutdown. */
export interface Tracing {
  tracer: Tracer;
  /** The span counters; none when tracing is off. */
  metricFamilies(): MetricFamily[];
  /** Exports what is queued, then stops; bounded by the export timeout. Safe to call twice. */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { tracer: NOOP_TRACER, metricFamilies: () => [], shutdown: async () => undefined };

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
    metricFamilies: () => spanCountFamilies(otlp.counts),
    shutdown: () => {
      stopped ??= otlp.shutdown().catch((error: unknown) => logger.warn("telemetry.shutdown_failed", { error }));
      return stopped;
    },
  };
}

/** The exporter's own counts (spanBatch.ts keeps them as spans are queued, sent or dropped). */
export function spanCountFamilies(counts: SpanCounts): MetricFamily[] {
  return [
    {
      name: "agentd_telemetry_spans_exported_total",
      help: "Spans the OTLP collector accepted.",
      type: "counter",
      samples: [{ value: counts.exported }],
    },
    {
      name: "agentd_telemetry_spans_dropped_total",
      help: "Spans dropped: the export queue was full, or the collector did not take them.",
      type: "counter",
      samples: [
        { labels: { reason: "queue_full" }, value: counts.dropped_queue_full },
        { labels: { reason: "export_failed" }, value: counts.dropped_export_failed },
      ],
    },
  ];
}
