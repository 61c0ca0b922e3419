import { hostname } from "node:os";
import type { TelemetryConfig } from "../core/config/sections/telemetryConfig.ts";
import { VERSION } from "../core/version.ts";
import type { AttributeValue, FinishedSpan } from "./otlpJson.ts";
import { SpanBatch, type SpanCounts } from "./spanBatch.ts";
import { formatTraceparent, newSpanId, newTraceId, parseTraceparent } from "./traceContext.ts";
import type { Span, SpanAttributes, SpanKind, SpanOptions, Tracer } from "./tracer.ts";

/** OTLP's SpanKind numbers. */
const KINDS: Record<SpanKind, number> = { internal: 1, server: 2, client: 3 };

/** `http://collector:4318` → `http://collector:4318/v1/traces`; a URL already ending so is kept. */
export function tracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  if (!url.pathname.endsWith("/v1/traces")) url.pathname = `${url.pathname.replace(/\/+$/, "")}/v1/traces`;
  return url.toString();
}

/**
 * One span: plain fields while it runs, handed to the batch as it is when it ends (it is its own
 * FinishedSpan: no copy per span). A span under an unsampled parent (the client's `traceparent`
 * said so) keeps the trace going downstream but is not exported, as OpenTelemetry's default
 * parent-based sampler does.
 */
class OtlpSpan implements Span, FinishedSpan {
  readonly attributes: Record<string, AttributeValue> = {};
  readonly startMs = performance.now();
  endMs = 0;
  error: { message?: string } | undefined = undefined;
  #ended = false;

  constructor(
    private readonly batch: SpanBatch,
    readonly traceId: string,
    readonly spanId: string,
    readonly parentSpanId: string | undefined,
    readonly sampled: boolean,
    readonly name: string,
    readonly kind: number,
    attributes: SpanAttributes | undefined,
  ) {
    if (attributes) this.setAttributes(attributes);
  }

  traceparent(): string {
    return formatTraceparent(this.traceId, this.spanId, this.sampled);
  }

  setAttributes(attributes: SpanAttributes): void {
    if (this.#ended) return;
    for (const key in attributes) {
      const value = attributes[key];
      if (value !== undefined) this.attributes[key] = value;
    }
  }

  /** Ends the span once; later calls change nothing. */
  end(error?: { type: string; message?: string }): void {
    if (this.#ended) return;
    if (error) {
      this.attributes["error.type"] = error.type;
      this.error = { message: error.message };
    }
    this.#ended = true;
    if (!this.sampled) return;
    this.endMs = performance.now();
    this.batch.add(this);
  }
}

class OtlpTracer implements Tracer {
  readonly enabled = true;

  constructor(private readonly batch: SpanBatch) {}

  startSpan(name: string, options: SpanOptions = {}): Span {
    const kind = KINDS[options.kind ?? "internal"];
    const parent = options.parent;
    let traceId: string;
    let parentSpanId: string | undefined;
    let sampled = true;
    if (parent instanceof OtlpSpan) {
      traceId = parent.traceId;
      parentSpanId = parent.spanId;
      sampled = parent.sampled;
    } else {
      // A client's traceparent: the span continues the client's trace (a malformed one starts a new trace).
      const remote = typeof parent === "string" ? parseTraceparent(parent) : undefined;
      traceId = remote?.traceId ?? newTraceId();
      parentSpanId = remote?.spanId;
      sampled = remote?.sampled ?? true;
    }
    return new OtlpSpan(this.batch, traceId, newSpanId(), parentSpanId, sampled, name, kind, options.attributes);
  }
}

export interface OtlpTracing {
  tracer: Tracer;
  counts: SpanCounts;
  /** Exports what is queued (bounded by the export timeout) and stops. */
  shutdown(): Promise<void>;
}

/** Spans recorded as plain objects, batched in a bounded queue and exported over OTLP/HTTP (protobuf or JSON). */
export function startOtlpTracing(config: TelemetryConfig["otlp"] & { endpoint: string }, processName: string): OtlpTracing {
  const batch = new SpanBatch(
    {
      url: tracesUrl(config.endpoint),
      protocol: config.protocol,
      headers: config.headers,
      maxQueueSize: config.max_queue_size,
      maxExportBatchSize: Math.min(config.max_export_batch_size, config.max_queue_size),
      scheduledDelayMs: config.scheduled_delay_ms,
      timeoutMs: config.timeout_ms,
    },
    {
      resource: {
        "service.name": config.service_name,
        "service.version": VERSION,
        "service.instance.id": `${hostname()}:${process.pid}`,
        "host.name": hostname(),
        "process.pid": process.pid,
        "agentd.process": processName,
      },
      scope: { name: "agentd", version: VERSION },
    },
  );
  return { tracer: new OtlpTracer(batch), counts: batch.counts, shutdown: () => batch.shutdown() };
}
