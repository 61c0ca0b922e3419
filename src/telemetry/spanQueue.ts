import type { Context } from "@opentelemetry/api";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace";

export interface SpanCounts {
  exported: number;
  dropped_queue_full: number;
  dropped_export_failed: number;
}

/** Counts what the exporter was handed and what it delivered; a failed export is counted as dropped. */
export class CountingExporter implements SpanExporter {
  /** Spans handed to export so far (whatever became of them). */
  handed = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly counts: SpanCounts,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.handed += spans.length;
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.counts.exported += spans.length;
      else this.counts.dropped_export_failed += spans.length;
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * Bounds the batch queue and counts what it drops: a span ended while `max` spans wait for export
 * (the collector is down or slow) is dropped here, counted, and never buffered.
 */
export class BoundedSpanProcessor implements SpanProcessor {
  #accepted = 0;

  constructor(
    private readonly batch: SpanProcessor,
    private readonly exporter: CountingExporter,
    private readonly max: number,
    private readonly counts: SpanCounts,
  ) {}

  onStart(span: Span, parentContext: Context): void {
    this.batch.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    if (this.#accepted - this.exporter.handed >= this.max) {
      this.counts.dropped_queue_full++;
      return;
    }
    this.#accepted++;
    this.batch.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.batch.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.batch.shutdown();
  }
}
