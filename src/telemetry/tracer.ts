/**
 * agentd's tracing seam. Capabilities start spans through this interface only; the OTLP exporter
 * behind it is loaded (by dynamic import) when `telemetry.otlp.endpoint` is set. Off, every
 * call lands on one shared no-op span, and hot paths check `enabled` to skip even building
 * attributes.
 */

export type SpanKind = "client" | "server" | "internal";
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

export interface Span {
  /** The W3C `traceparent` naming this span, for a request that continues the trace; undefined when off. */
  traceparent(): string | undefined;
  setAttributes(attributes: SpanAttributes): void;
  /** Ends the span; with an error its status is ERROR and `error.type` is set. */
  end(error?: { type: string; message?: string }): void;
}

export interface SpanOptions {
  kind?: SpanKind;
  /** The parent: a span of agentd's, or a client's `traceparent` header (ignored when malformed). */
  parent?: Span | string;
  attributes?: SpanAttributes;
}

export interface Tracer {
  readonly enabled: boolean;
  startSpan(name: string, options?: SpanOptions): Span;
}

const NOOP_SPAN: Span = {
  traceparent: () => undefined,
  setAttributes: () => undefined,
  end: () => undefined,
};

export const NOOP_TRACER: Tracer = {
  enabled: false,
  startSpan: () => NOOP_SPAN,
};
