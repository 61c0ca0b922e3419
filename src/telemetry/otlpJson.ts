/**
 * Finished spans in OTLP/HTTP's JSON encoding (opentelemetry-proto's ExportTraceServiceRequest with
 * the JSON mapping OTLP specifies: ids as lowercase hex, times as decimal strings of Unix nanoseconds,
 * enums as numbers). Built once per batch, off the request path.
 */

export type AttributeValue = string | number | boolean;

/** What a span holds once it has ended; times are ms on the `performance.now()` clock. */
export interface FinishedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, AttributeValue>;
  /** Set only for a failed span (OTLP's STATUS_CODE_ERROR, 2). */
  error: { message?: string } | undefined;
}

export interface ExportIdentity {
  resource: Record<string, AttributeValue>;
  scope: { name: string; version: string };
}

type AnyValue = { stringValue: string } | { boolValue: boolean } | { intValue: string } | { doubleValue: number };

function anyValue(value: AttributeValue): AnyValue {
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  // int64 goes as a decimal string in OTLP JSON, so no collector reads it as a double.
  return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

function keyValues(attributes: Record<string, AttributeValue>): Array<{ key: string; value: AnyValue }> {
  const list: Array<{ key: string; value: AnyValue }> = [];
  for (const key in attributes) list.push({ key, value: anyValue(attributes[key]!) });
  return list;
}

/**
 * A time on the `performance.now()` clock as whole Unix microseconds: an exact integer in a double,
 * where Unix nanoseconds are not. Both encodings start from it.
 */
export function unixMicros(timeOrigin: number, ms: number): number {
  return Math.round((timeOrigin + ms) * 1000);
}

/** A time on the `performance.now()` clock as Unix nanoseconds, in decimal: the whole microseconds and three zeros. */
export function unixNanos(timeOrigin: number, ms: number): string {
  return `${unixMicros(timeOrigin, ms)}000`;
}

/** One export request's body for `spans`. */
export function otlpTraceJson(identity: ExportIdentity, spans: readonly FinishedSpan[], timeOrigin: number): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: keyValues(identity.resource) },
        scopeSpans: [
          {
            scope: identity.scope,
            spans: spans.map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: span.kind,
              startTimeUnixNano: unixNanos(timeOrigin, span.startMs),
              endTimeUnixNano: unixNanos(timeOrigin, span.endMs),
              attributes: keyValues(span.attributes),
              status: span.error ? { code: 2, ...(span.error.message ? { message: span.error.message } : {}) } : {},
            })),
          },
        ],
      },
    ],
  });
}
