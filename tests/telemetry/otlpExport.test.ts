import { afterEach, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/core/log/index.ts";
import { telemetryConfigSchema } from "../../src/core/config/sections/telemetryConfig.ts";
import { startTracing, type Tracing } from "../../src/telemetry/index.ts";
import { otlpTraceJson, unixNanos } from "../../src/telemetry/otlpJson.ts";
import { formatTraceparent, newSpanId, newTraceId, parseTraceparent } from "../../src/telemetry/traceContext.ts";
import { waitFor } from "../support/waitFor.ts";
import { startOtlpReceiver, type OtlpReceiver } from "./support/otlpReceiver.ts";
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
      telemetryConfigSchema.parse({ otlp: { endpoint: receiver.url, scheduled_delay_ms: 20, ...otlp } }),
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
    // The collector holds the spans before the exporter has read its answer: the count follows that answer.
    await waitFor(
      "the export counted",
      () => renderPrometheus(tracing.metricFamilies()).includes("agentd_telemetry_spans_exported_total 2\n") || undefined,
    );
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

  test("a full batch goes at once, without waiting for the scheduled delay", async () => {
    const { receiver, tracing } = await start({ scheduled_delay_ms: 60_000, max_export_batch_size: 5 });
    for (let i = 0; i < 5; i++) tracing.tracer.startSpan(`batch ${i}`).end();
    await waitFor("the full batch", () => (receiver.spans.length === 5 ? true : undefined));
  });
});
