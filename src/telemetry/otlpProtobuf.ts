/**
 * Finished spans in OTLP/HTTP's binary encoding (opentelemetry-proto's ExportTraceServiceRequest,
 * `application/x-protobuf`), the encoding OTLP makes the default: written field by field into one
 * buffer, with no object tree in between. The field numbers are opentelemetry-proto's
 * (collector/trace/v1, trace/v1, common/v1, resource/v1).
 */
import { type AttributeValue, type ExportIdentity, type FinishedSpan, unixMicros } from "./otlpJson.ts";
import { ProtobufWriter } from "./protobufWriter.ts";

// ExportTraceServiceRequest.resource_spans; ResourceSpans.resource, .scope_spans; Resource.attributes.
const REQUEST_RESOURCE_SPANS = 1;
const RESOURCE_SPANS_RESOURCE = 1;
const RESOURCE_SPANS_SCOPE_SPANS = 2;
const RESOURCE_ATTRIBUTES = 1;
// ScopeSpans.scope, .spans; InstrumentationScope.name, .version.
const SCOPE_SPANS_SCOPE = 1;
const SCOPE_SPANS_SPANS = 2;
const SCOPE_NAME = 1;
const SCOPE_VERSION = 2;
// Span.
const SPAN_TRACE_ID = 1;
const SPAN_SPAN_ID = 2;
const SPAN_PARENT_SPAN_ID = 4;
const SPAN_NAME = 5;
const SPAN_KIND = 6;
const SPAN_START_TIME = 7;
const SPAN_END_TIME = 8;
const SPAN_ATTRIBUTES = 9;
const SPAN_STATUS = 15;
// Status.message, .code.
const STATUS_MESSAGE = 2;
const STATUS_CODE = 3;
const STATUS_CODE_ERROR = 2;
// KeyValue.key, .value; AnyValue's oneof.
const KEY_VALUE_KEY = 1;
const KEY_VALUE_VALUE = 2;
const ANY_STRING = 1;
const ANY_BOOL = 2;
const ANY_INT = 3;
const ANY_DOUBLE = 4;

/** Attribute keys come from agentd's own code, a few dozen; the bound only guards against a key made from data. */
const KEY_CACHE_LIMIT = 512;
const keyFields = new Map<string, Uint8Array>();

/** A KeyValue's key field, encoded once per key name. */
function keyField(key: string): Uint8Array {
  let bytes = keyFields.get(key);
  if (bytes) return bytes;
  const writer = new ProtobufWriter(key.length * 3 + 8);
  writer.string(KEY_VALUE_KEY, key);
  bytes = writer.bytes().slice();
  if (keyFields.size < KEY_CACHE_LIMIT) keyFields.set(key, bytes);
  return bytes;
}

function keyValues(writer: ProtobufWriter, field: number, attributes: Record<string, AttributeValue>): void {
  for (const key in attributes) {
    const value = attributes[key]!;
    const pair = writer.begin(field);
    writer.raw(keyField(key));
    const any = writer.begin(KEY_VALUE_VALUE);
    if (typeof value === "string") writer.string(ANY_STRING, value);
    else if (typeof value === "boolean") writer.uint(ANY_BOOL, value ? 1 : 0);
    else if (Number.isSafeInteger(value)) writer.int64(ANY_INT, value);
    else writer.double(ANY_DOUBLE, value);
    writer.end(any);
    writer.end(pair);
  }
}

/** One export request's body for `spans`, written over whatever `writer` held: send it before the writer's next use. */
export function otlpTraceProtobuf(
  identity: ExportIdentity,
  spans: readonly FinishedSpan[],
  timeOrigin: number,
  writer: ProtobufWriter,
): Uint8Array {
  writer.reset();
  // A batch is hundreds of KiB (three length bytes), a span a few hundred bytes (two).
  const resourceSpans = writer.begin(REQUEST_RESOURCE_SPANS, 3);
  const resource = writer.begin(RESOURCE_SPANS_RESOURCE, 2);
  keyValues(writer, RESOURCE_ATTRIBUTES, identity.resource);
  writer.end(resource);
  const scopeSpans = writer.begin(RESOURCE_SPANS_SCOPE_SPANS, 3);
  const scope = writer.begin(SCOPE_SPANS_SCOPE);
  writer.string(SCOPE_NAME, identity.scope.name);
  writer.string(SCOPE_VERSION, identity.scope.version);
  writer.end(scope);
  for (const span of spans) {
    const message = writer.begin(SCOPE_SPANS_SPANS, 2);
    writer.hexBytes(SPAN_TRACE_ID, span.traceId);
    writer.hexBytes(SPAN_SPAN_ID, span.spanId);
    if (span.parentSpanId) writer.hexBytes(SPAN_PARENT_SPAN_ID, span.parentSpanId);
    writer.string(SPAN_NAME, span.name);
    writer.uint(SPAN_KIND, span.kind);
    writer.fixed64FromMicros(SPAN_START_TIME, unixMicros(timeOrigin, span.startMs));
    writer.fixed64FromMicros(SPAN_END_TIME, unixMicros(timeOrigin, span.endMs));
    keyValues(writer, SPAN_ATTRIBUTES, span.attributes);
    // An unset status is the message's default: left out.
    if (span.error) {
      const status = writer.begin(SPAN_STATUS);
      if (span.error.message) writer.string(STATUS_MESSAGE, span.error.message);
      writer.uint(STATUS_CODE, STATUS_CODE_ERROR);
      writer.end(status);
    }
    writer.end(message);
  }
  writer.end(scopeSpans);
  writer.end(resourceSpans);
  return writer.bytes();
}
