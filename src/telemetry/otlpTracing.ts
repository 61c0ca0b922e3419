import { hostname } from "node:os";
import {
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanKind as OtelSpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span as OtelSpan,
  type Tracer as OtelTracer,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import type { TelemetryConfig } from "../core/config/sections/telemetryConfig.ts";
import { VERSION } from "../core/version.ts";
import { BoundedSpanProcessor, CountingExporter, type SpanCounts } from "./spanQueue.ts";
import type { Span, SpanAttributes, SpanKind, SpanOptions, Tracer } from "./tracer.ts";

const KINDS: Record<SpanKind, OtelSpanKind> = {
  client: OtelSpanKind.CLIENT,
  server: OtelSpanKind.SERVER,
  internal: OtelSpanKind.INTERNAL,
};

const propagator = new W3CTraceContextPropagator();

/** `http://collector:4318` → `http://collector:4318/v1/traces`; a URL already ending so is kept. */
export function tracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  if (!url.pathname.endsWith("/v1/traces")) url.pathname = `${url.pathname.replace(/\/+$/, "")}/v1/traces`;
  return url.toString();
}

function cleanAttributes(attributes: SpanAttributes): Record<string, string | number | boolean> {
  const clean: Record<string, string | number | boolean> = {};
  for (const key in attributes) {
    const value = attributes[key];
    if (value !== undefined) clean[key] = value;
  }
  return clean;
}

class OtlpSpan implements Span {
  constructor(readonly span: OtelSpan) {}

  /** Written directly (W3C trace context, version 00): the propagator's contexts and carrier cost more per request. */
  traceparent(): string | undefined {
    const { traceId, spanId, traceFlags } = this.span.spanContext();
    return `00-${traceId}-${spanId}-0${traceFlags & 1}`;
  }

  setAttributes(attributes: SpanAttributes): void {
    for (const key in attributes) {
      const value = attributes[key];
      if (value !== undefined) this.span.setAttribute(key, value);
    }
  }

  end(error?: { type: string; message?: string }): void {
    if (error) {
      this.span.setAttribute("error.type", error.type);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    this.span.end();
  }
}

class OtlpTracer implements Tracer {
  readonly enabled = true;

  constructor(private readonly tracer: OtelTracer) {}

  startSpan(name: string, options: SpanOptions = {}): Span {
    const span = this.tracer.startSpan(
      name,
      { kind: KINDS[options.kind ?? "internal"], attributes: options.attributes ? cleanAttributes(options.attributes) : undefined },
      this.#parentContext(options.parent),
    );
    return new OtlpSpan(span);
  }

  #parentContext(parent: Span | string | undefined): Context {
    if (parent === undefined) return ROOT_CONTEXT;
    if (parent instanceof OtlpSpan) return trace.setSpan(ROOT_CONTEXT, parent.span);
    if (typeof parent !== "string") return ROOT_CONTEXT;
    // A client's traceparent: the span continues the client's trace (a malformed one starts a new trace).
    return propagator.extract(ROOT_CONTEXT, { traceparent: parent }, defaultTextMapGetter);
  }
}

export interface OtlpTracing {
  tracer: Tracer;
  counts: SpanCounts;
  /** Exports what is queued (bounded by the export timeout) and stops. */
  shutdown(): Promise<void>;
}

/** The OpenTelemetry SDK: spans batched in a bounded queue and exported over OTLP/HTTP (JSON). */
export function startOtlpTracing(config: TelemetryConfig["otlp"] & { endpoint: string }, processName: string): OtlpTracing {
  const counts: SpanCounts = { exported: 0, dropped_queue_full: 0, dropped_export_failed: 0 };
  const exporter = new CountingExporter(
    new OTLPTraceExporter({ url: tracesUrl(config.endpoint), headers: config.headers, timeoutMillis: config.timeout_ms }),
    counts,
  );
  const batch = new BatchSpanProcessor({
    exporter,
    maxQueueSize: config.max_queue_size,
    maxExportBatchSize: Math.min(config.max_export_batch_size, config.max_queue_size),
    scheduledDelayMillis: config.scheduled_delay_ms,
    exportTimeoutMillis: config.timeout_ms,
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      "service.name": config.service_name,
      "service.version": VERSION,
      "service.instance.id": `${hostname()}:${process.pid}`,
      "host.name": hostname(),
      "process.pid": process.pid,
      "agentd.process": processName,
    }),
    spanProcessors: [new BoundedSpanProcessor(batch, exporter, config.max_queue_size, counts)],
  });
  // No global registration: agentd passes parents explicitly, so nothing else is patched.
  return {
    tracer: new OtlpTracer(provider.getTracer("agentd", VERSION)),
    counts,
    shutdown: () => provider.shutdown(),
  };
}
