import { runInBackground } from "../core/process/index.ts";
import { otlpTraceJson, type ExportIdentity, type FinishedSpan } from "./otlpJson.ts";
import { otlpTraceProtobuf } from "./otlpProtobuf.ts";
import { ProtobufWriter } from "./protobufWriter.ts";

export interface SpanCounts {
  exported: number;
  dropped_queue_full: number;
  dropped_export_failed: number;
}

/** OTLP/HTTP's two encodings, named as OTEL_EXPORTER_OTLP_PROTOCOL names them. */
export type OtlpProtocol = "http/protobuf" | "http/json";

export interface SpanBatchSettings {
  url: string;
  protocol: OtlpProtocol;
  headers: Record<string, string>;
  /** Spans waiting for export beyond this many are dropped and counted. */
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMs: number;
  /** One export's deadline, its retries included. */
  timeoutMs: number;
}

/** Statuses OTLP/HTTP says to retry (with backoff); any other failure loses the batch. */
const RETRYABLE = new Set([429, 502, 503, 504]);
const MAX_TRIES = 5;
const FIRST_BACKOFF_MS = 250;
const MAX_KEPT_WRITER_BYTES = 4 * 1024 * 1024;

/**
 * Ended spans wait here, in a bounded queue, and go to the collector in batches: when a batch is
 * full or `scheduledDelayMs` after the first waiting span, one export at a time. Ending a span
 * only pushes it; the JSON is built when its batch is sent. A span ended while the queue is full
 * is dropped and counted, never buffered (the collector is down or slow).
 */
export class SpanBatch {
  readonly counts: SpanCounts = { exported: 0, dropped_queue_full: 0, dropped_export_failed: 0 };
  #queue: FinishedSpan[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #exporting: Promise<void> | undefined;
  #closed = false;
  /** Made on the first protobuf batch; batches go one at a time, so one buffer serves them all. */
  #writer: ProtobufWriter | undefined;
  #shutdown: Promise<void> | undefined;

  constructor(
    private readonly settings: SpanBatchSettings,
    private readonly identity: ExportIdentity,
  ) {}

  add(span: FinishedSpan): void {
    if (this.#closed || this.#queue.length >= this.settings.maxQueueSize) {
      this.counts.dropped_queue_full++;
      return;
    }
    this.#queue.push(span);
    if (this.#exporting !== undefined) return;
    // Once, when the batch fills: later spans wait for the timer already set.
    if (this.#queue.length === this.settings.maxExportBatchSize) this.#exportSoon(0);
    else if (!this.#timer) this.#exportSoon(this.settings.scheduledDelayMs);
  }

  /**
   * Exports what waits (within the export timeout after any export under way), then takes no more
   * spans. A second call, at once or later, gets the first one's promise: two drains at a time
   * would share the one protobuf buffer.
   */
  shutdown(): Promise<void> {
    this.#shutdown ??= this.#drain();
    return this.#shutdown;
  }

  async #drain(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#exporting;
    const deadline = performance.now() + this.settings.timeoutMs;
    while (this.#queue.length > 0) {
      if (performance.now() >= deadline) {
        this.counts.dropped_export_failed += this.#queue.length;
        this.#queue = [];
        return;
      }
      await this.#exportBatch(deadline);
    }
  }

  /** A timer, not a call in place: the span's request goes on, and the batch is built after it. */
  #exportSoon(delayMs: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#exporting !== undefined || this.#closed) return;
      this.#exporting = runInBackground("telemetry.export", () => this.#exportBatch()).done.then(() => {
        this.#exporting = undefined;
        if (this.#closed || this.#queue.length === 0) return;
        this.#exportSoon(this.#queue.length >= this.settings.maxExportBatchSize ? 0 : this.settings.scheduledDelayMs);
      });
    }, delayMs);
    // A process with nothing else to do may exit; shutdown() exports what is left.
    this.#timer.unref?.();
  }

  async #exportBatch(deadline = performance.now() + this.settings.timeoutMs): Promise<void> {
    const spans = this.#queue.splice(0, this.settings.maxExportBatchSize);
    if (spans.length === 0) return;
    const body = this.#encode(spans);
    if (await this.#send(body, deadline)) this.counts.exported += spans.length;
    else this.counts.dropped_export_failed += spans.length;
    // A batch of outsized spans grew the buffer: let it go rather than hold it for good.
    if (this.#writer && this.#writer.capacity > MAX_KEPT_WRITER_BYTES) this.#writer = undefined;
  }

  #encode(spans: FinishedSpan[]): string | Uint8Array {
    if (this.settings.protocol === "http/json") return otlpTraceJson(this.identity, spans, performance.timeOrigin);
    this.#writer ??= new ProtobufWriter();
    return otlpTraceProtobuf(this.identity, spans, performance.timeOrigin, this.#writer);
  }

  /** POSTs one batch, retrying a refused connection or a retryable status with backoff until the deadline. */
  async #send(body: string | Uint8Array, deadline: number): Promise<boolean> {
    const contentType = typeof body === "string" ? "application/json" : "application/x-protobuf";
    for (let tries = 1; ; tries++) {
      const left = deadline - performance.now();
      if (left <= 0) return false;
      let retry: boolean;
      try {
        const response = await fetch(this.settings.url, {
          method: "POST",
          headers: { ...this.settings.headers, "content-type": contentType },
          body,
          signal: AbortSignal.timeout(left),
        });
        // Read to the end, so the connection is reused.
        await response.arrayBuffer();
        if (response.ok) return true;
        retry = RETRYABLE.has(response.status);
      } catch {
        // Refused, reset or timed out: worth another try while time is left.
        retry = true;
      }
      const backoff = FIRST_BACKOFF_MS * 2 ** (tries - 1);
      if (!retry || tries >= MAX_TRIES || performance.now() + backoff >= deadline) return false;
      await Bun.sleep(backoff);
    }
  }
}
