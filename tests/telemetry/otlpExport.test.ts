import { afterEach, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/core/log/index.ts";
import { telemetryConfigSchema } from "../../src/core/config/sections/telemetryConfig.ts";
import { startTracing, type Tracing } from "../../src/telemetry/index.ts";
import { otlpTraceJson, unixNanos, type FinishedSpan } from "../../src/telemetry/otlpJson.ts";
import { otlpTraceProtobuf } from "../../src/telemetry/otlpProtobuf.ts";
import { ProtobufWriter } from "../../src/telemetry/protobufWriter.ts";
import { SpanBatch } from "../../src/telemetry/spanBatch.ts";
import { formatTraceparent, newSpanId, newTraceId, parseTraceparent } from "../../src/telemetry/traceContext.ts";
import { waitFor } from "../support/waitFor.ts";
import { decodeProtobuf, hexId, startOtlpReceiver, type ExportRequest, type OtlpReceiver } from "./support/otlpReceiver.ts";
import { renderPrometheus } from "../../src/core/metrics/index.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

describe("traceparent", () => {
  test("a valid header names the parent and whether it was sampled", () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: false });
    // Only the sampled bit counts among the flags.
    expect(parseTraceparent(` 00-${TRACE}-${SPAN}-03 `)?.sampled).toBe(true);
    // A later version may add fields after the four it shares with 00.
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-what-comes-next`)?.traceId).toBe(TRACE);
  });

  test("malformed headers name no parent", () => {
    for (const header of [
      "",
      "garbage",
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `00-${"0".repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `ff-${TRACE}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-01-extra`,
      `00-${TRACE.slice(1)}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-1`,
    ])
      expect(parseTraceparent(header)).toBeUndefined();
  });

  test("new ids are hex of the right length, and differ", () => {
    const traces = new Set(Array.from({ length: 500 }, newTraceId));
    const spans = new Set(Array.from({ length: 500 }, newSpanId));
    expect(traces.size).toBe(500);
    expect(spans.size).toBe(500);
    for (const id of traces) expect(id).toMatch(/^[0-9a-f]{32}$/);
    for (const id of spans) expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(parseTraceparent(formatTraceparent(TRACE, SPAN, false))).toEqual({ traceId: TRACE, spanId: SPAN, sampled: false });
  });
});

describe("OTLP JSON", () => {
  test("times are Unix nanoseconds in decimal, exact to the microsecond", () => {
    expect(unixNanos(1_700_000_000_000.5, 0.25)).toBe("1700000000000750000");
    expect(unixNanos(1_700_000_000_000, 12.125)).toBe("1700000000012125000");
    expect(unixNanos(1_700_000_000_000, 0.9999999)).toBe("1700000000001000000");
    expect(unixNanos(1_800_000_000_000.001, 86_400_000.002)).toBe("1800086400000003000");
  });

  test("attributes keep their types: ints as decimal strings, other numbers as doubles", () => {
    const body = JSON.parse(
      otlpTraceJson(
        { resource: { "service.name": "agentd" }, scope: { name: "agentd", version: "1" } },
        [
          {
            traceId: TRACE,
            spanId: SPAN,
            parentSpanId: undefined,
            name: "s",
            kind: 3,
            startMs: 1,
            endMs: 2,
            attributes: { s: "x", i: 42, d: 0.5, b: false },
            error: { message: "boom" },
          },
        ],
        0,
      ),
    );
    const span = body.resourceSpans[0].scopeSpans[0].spans[0];
    expect(span.parentSpanId).toBeUndefined();
    expect(span.attributes).toEqual([
      { key: "s", value: { stringValue: "x" } },
      { key: "i", value: { intValue: "42" } },
      { key: "d", value: { doubleValue: 0.5 } },
      { key: "b", value: { boolValue: false } },
    ]);
    expect(span.status).toEqual({ code: 2, message: "boom" });
    expect([span.startTimeUnixNano, span.endTimeUnixNano]).toEqual(["1000000", "2000000"]);
  });
});

/** A decoded export as comparable rows: ids in hex, an unset status as {}. */
function exportRows(request: ExportRequest) {
  return (request.resourceSpans ?? []).flatMap((rs) =>
    (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((span) => ({
        resource: rs.resource?.attributes,
        traceId: hexId(span.traceId),
        spanId: hexId(span.spanId),
        parentSpanId: hexId(span.parentSpanId),
        name: span.name,
        kind: span.kind,
        start: span.startTimeUnixNano,
        end: span.endTimeUnixNano,
        attributes: span.attributes ?? [],
        status: span.status ?? {},
      })),
    ),
  );
}

describe("OTLP protobuf", () => {
  const identity = { resource: { "service.name": "agentd", "process.pid": 4242 }, scope: { name: "agentd", version: "1.2.3" } };
  const span = (i: number, over: Partial<FinishedSpan> = {}): FinishedSpan => ({
    traceId: TRACE,
    spanId: `${SPAN.slice(0, 12)}${i.toString(16).padStart(4, "0")}`,
    parentSpanId: i % 2 ? SPAN : undefined,
    name: `chat model-${i}`,
    kind: 3,
    startMs: 1 + i,
    endMs: 2.0005 + i,
    attributes: { s: "x", i, zero: 0, negative: -42, big: 2 ** 53 - 1, d: 0.5, b: false, t: true },
    error: undefined,
    ...over,
  });

  test("an official decoder reads what the JSON encoding says, field for field", async () => {
    const spans = [
      span(0),
      span(1, { error: { message: "upstream down" } }),
      span(2, { error: {} }),
      // Multi-byte UTF-8 and a string past one length byte.
      span(3, { name: `ünïcödé ✓ 😀 ${"x".repeat(300)}` }),
      // A span past 16 KiB: its two kept length bytes are not enough.
      span(4, { attributes: { long: "y".repeat(20_000), "gen_ai.request.model": "mödel" } }),
      span(5, { attributes: {} }),
    ];
    const timeOrigin = 1_764_000_000_000.25;
    const fromProtobuf = exportRows(await decodeProtobuf(otlpTraceProtobuf(identity, spans, timeOrigin, new ProtobufWriter(16))));
    const fromJson = exportRows(JSON.parse(otlpTraceJson(identity, spans, timeOrigin)) as ExportRequest);
    expect(fromProtobuf).toEqual(fromJson);
    expect(fromProtobuf[1]!.status).toEqual({ code: 2, message: "upstream down" });
    expect(fromProtobuf[0]!.attributes).toContainEqual({ key: "negative", value: { intValue: "-42" } });
    expect(fromProtobuf[0]!.start).toBe("1764000000001250000");
  });

  test("a batch past 2 MiB, and a writer reused for a smaller one after it", async () => {
    const writer = new ProtobufWriter();
    const big = Array.from({ length: 300 }, (_, i) => span(i, { attributes: { blob: "z".repeat(8_000) } }));
    const decoded = exportRows(await decodeProtobuf(otlpTraceProtobuf(identity, big, 0, writer)));
    expect(decoded.length).toBe(300);
    expect(decoded[299]!.attributes).toEqual([{ key: "blob", value: { stringValue: "z".repeat(8_000) } }]);
    const small = exportRows(await decodeProtobuf(otlpTraceProtobuf(identity, [span(7)], 0, writer)));
    expect(small.map((row) => row.spanId)).toEqual([span(7).spanId]);
  });

  test("text of three UTF-8 bytes per unit arrives whole whatever room the writer had left", async () => {
    const text = "模".repeat(50);
    // Every starting size, so one of them leaves exactly the room the old reservation fell short by.
    for (let capacity = 1; capacity <= 200; capacity++) {
      const writer = new ProtobufWriter(capacity);
      writer.string(1, text);
      const bytes = writer.bytes();
      // Field 1, length-delimited; 150 bytes as a two-byte varint.
      expect([...bytes.subarray(0, 3)]).toEqual([0x0a, 0x96, 0x01]);
      expect(new TextDecoder().decode(bytes.subarray(3))).toBe(text);
    }
    const long = "模".repeat(50_000);
    const rows = exportRows(
      await decodeProtobuf(otlpTraceProtobuf(identity, [span(0, { attributes: { model: long } })], 0, new ProtobufWriter())),
    );
    expect(rows[0]!.attributes).toEqual([{ key: "model", value: { stringValue: long } }]);
  });

  test("varints at their length boundaries, and a negative int64 in ten bytes", () => {
    const bytesOf = (write: (writer: ProtobufWriter) => void) => {
      const writer = new ProtobufWriter(1);
      write(writer);
      return [...writer.bytes()];
    };
    expect(bytesOf((w) => w.uint(1, 127))).toEqual([0x08, 0x7f]);
    expect(bytesOf((w) => w.uint(1, 128))).toEqual([0x08, 0x80, 0x01]);
    expect(bytesOf((w) => w.uint(1, 16_384))).toEqual([0x08, 0x80, 0x80, 0x01]);
    expect(bytesOf((w) => w.uint(16, 1))).toEqual([0x80, 0x01, 0x01]);
    expect(bytesOf((w) => w.uint(1, 2 ** 53 - 1))).toEqual([0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    expect(bytesOf((w) => w.int64(1, -1))).toEqual([0x08, ...Array(9).fill(0xff), 0x01]);
    expect(bytesOf((w) => w.int64(1, -2))).toEqual([0x08, 0xfe, ...Array(8).fill(0xff), 0x01]);
    // 1 µs after the epoch is 1000 ns; 2^32 µs crosses the low word.
    expect(bytesOf((w) => w.fixed64FromMicros(1, 1))).toEqual([0x09, 0xe8, 0x03, 0, 0, 0, 0, 0, 0]);
    expect(bytesOf((w) => w.fixed64FromMicros(1, 2 ** 32))).toEqual([0x09, 0, 0, 0, 0, 0xe8, 0x03, 0, 0]);
    expect(bytesOf((w) => w.hexBytes(1, "0aFf"))).toEqual([0x0a, 0x02, 0x0a, 0xff]);
  });
});

describe("export to a collector", () => {
  let receiver: OtlpReceiver | undefined;
  let tracing: Tracing | undefined;
  afterEach(async () => {
    await tracing?.shutdown();
    await receiver?.close();
    tracing = receiver = undefined;
  });

  const start = async (otlp: Record<string, unknown> = {}) => {
    receiver = startOtlpReceiver();
    tracing = await startTracing(
      telemetryConfigSchema().parse({ otlp: { endpoint: receiver.url, scheduled_delay_ms: 20, ...otlp } }),
      "test",
      createLogger("test"),
    );
    return { receiver, tracing };
  };

  test("a span tree reaches the collector: ids, parents, kinds, attributes, error status and resource", async () => {
    const { receiver, tracing } = await start();
    const root = tracing.tracer.startSpan("root", { kind: "server", parent: `00-${TRACE}-${SPAN}-01`, attributes: { a: 1 } });
    const child = tracing.tracer.startSpan("child", { kind: "client", parent: root, attributes: { skip: undefined } });
    child.setAttributes({ "gen_ai.usage.input_tokens": 11, ok: true, ratio: 0.25 });
    child.end({ type: "503", message: "upstream down" });
    child.end();
    root.end();
    const spans = await waitFor("both spans", () => (receiver.spans.length === 2 ? receiver.spans : undefined));
    const [c, r] = [spans.find((s) => s.name === "child")!, spans.find((s) => s.name === "root")!];
    expect(r).toMatchObject({ traceId: TRACE, parentSpanId: SPAN, kind: 2, attributes: { a: 1 }, status: {} });
    expect(c).toMatchObject({
      traceId: TRACE,
      parentSpanId: r.spanId,
      kind: 3,
      attributes: { "gen_ai.usage.input_tokens": 11, ok: true, ratio: 0.25, "error.type": "503" },
      status: { code: 2, message: "upstream down" },
    });
    expect("skip" in c.attributes).toBe(false);
    expect(c.resource).toMatchObject({ "service.name": "agentd", "agentd.process": "test", "process.pid": process.pid });
    expect(root.traceparent()).toBe(`00-${TRACE}-${r.spanId}-01`);
    // OTLP's default encoding.
    expect(receiver.encodings.json).toBe(0);
    expect(receiver.encodings.protobuf).toBeGreaterThan(0);
    // The collector holds the spans before the exporter has read its answer: the count follows that answer.
    await waitFor(
      "the export counted",
      () => renderPrometheus(tracing.metricFamilies()).includes("agentd_telemetry_spans_exported_total 2\n") || undefined,
    );
  });

  test("with protocol http/json the same spans go as OTLP JSON", async () => {
    const { receiver, tracing } = await start({ protocol: "http/json" });
    const span = tracing.tracer.startSpan("json", { kind: "server", attributes: { n: 3, ok: false } });
    span.end({ type: "500", message: "failed" });
    const [received] = await waitFor("the span", () => (receiver.spans.length === 1 ? receiver.spans : undefined));
    expect(received).toMatchObject({
      name: "json",
      kind: 2,
      attributes: { n: 3, ok: false, "error.type": "500" },
      status: { code: 2, message: "failed" },
    });
    expect(receiver.encodings).toEqual({ protobuf: 0, json: 1 });
  });

  test("under an unsampled parent the trace goes on downstream, but nothing is exported", async () => {
    const { receiver, tracing } = await start();
    const span = tracing.tracer.startSpan("quiet", { parent: `00-${TRACE}-${SPAN}-00` });
    expect(span.traceparent()).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-00$`));
    span.end();
    const marker = tracing.tracer.startSpan("marker");
    marker.end();
    await waitFor("the marker span", () => receiver.spans.find((s) => s.name === "marker"));
    expect(receiver.spans.map((s) => s.name)).toEqual(["marker"]);
  });

  test("a collector answering 503 is retried until it takes the batch; a 400 loses it at once", async () => {
    const { receiver, tracing } = await start();
    receiver.failWith(503);
    tracing.tracer.startSpan("retried").end();
    await waitFor("a refused export", () => receiver.refused > 0 || undefined);
    receiver.failWith(0);
    await waitFor("the retried span", () => receiver.spans.find((s) => s.name === "retried"));

    receiver.failWith(400);
    const refusedBefore = receiver.refused;
    tracing.tracer.startSpan("refused").end();
    await waitFor(
      "the export counted as failed",
      () => renderPrometheus(tracing.metricFamilies()).includes('reason="export_failed"} 1') || undefined,
    );
    expect(receiver.refused).toBe(refusedBefore + 1);
    expect(renderPrometheus(tracing.metricFamilies())).toContain("agentd_telemetry_spans_exported_total 1\n");
  });

  test("shutdown exports what still waits, and spans ended afterwards are not sent", async () => {
    const { receiver, tracing } = await start({ scheduled_delay_ms: 60_000 });
    for (let i = 0; i < 3; i++) tracing.tracer.startSpan(`late ${i}`).end();
    expect(receiver.spans).toHaveLength(0);
    await tracing.shutdown();
    expect(receiver.spans.map((s) => s.name).sort()).toEqual(["late 0", "late 1", "late 2"]);
    tracing.tracer.startSpan("after").end();
    await tracing.shutdown();
    expect(receiver.spans).toHaveLength(3);
  });

  test("shutdown called twice at once drains once: a retried batch is resent as it was, not as the next one", async () => {
    receiver = startOtlpReceiver();
    const batch = new SpanBatch(
      {
        url: `${receiver.url}/v1/traces`,
        protocol: "http/protobuf",
        headers: {},
        maxQueueSize: 10,
        maxExportBatchSize: 1,
        scheduledDelayMs: 60_000,
        timeoutMs: 5_000,
      },
      { resource: { "service.name": "agentd" }, scope: { name: "agentd", version: "1" } },
    );
    const finished = (name: string): FinishedSpan => ({
      traceId: TRACE,
      spanId: SPAN,
      parentSpanId: undefined,
      name,
      kind: 1,
      startMs: 1,
      endMs: 2,
      attributes: {},
      error: undefined,
    });
    batch.add(finished("A"));
    batch.add(finished("B"));
    // The first export meets a 503 and is retried after its backoff; both drains run meanwhile.
    receiver.failWith(503);
    const both = Promise.all([batch.shutdown(), batch.shutdown()]);
    const collector = receiver;
    await waitFor("the refused export", () => (collector.refused > 0 ? true : undefined));
    receiver.failWith(0);
    await both;
    expect(receiver.spans.map((span) => span.name).sort()).toEqual(["A", "B"]);
    expect(batch.counts).toEqual({ exported: 2, dropped_queue_full: 0, dropped_export_failed: 0 });
  });

  test("a full batch goes at once, without waiting for the scheduled delay", async () => {
    const { receiver, tracing } = await start({ scheduled_delay_ms: 60_000, max_export_batch_size: 5 });
    for (let i = 0; i < 5; i++) tracing.tracer.startSpan(`batch ${i}`).end();
    await waitFor("the full batch", () => (receiver.spans.length === 5 ? true : undefined));
  });
});
