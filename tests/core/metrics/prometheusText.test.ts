import { describe, expect, test } from "bun:test";
import {
  CounterFamily,
  GaugeFamily,
  HistogramFamily,
  InvalidMetricFamilyError,
  renderPrometheus,
  type MetricFamily,
} from "../../../src/core/metrics/index.ts";
import { promtool } from "../../telemetry/support/monitoringServers.ts";

// The one renderer of /metrics: what it escapes, what it refuses, and families kept in memory.

const counter = (name: string, labels: Record<string, string> = {}): MetricFamily => ({
  name,
  help: "A test.",
  type: "counter",
  samples: [{ labels, value: 1 }],
});

function refusal(families: MetricFamily[]): InvalidMetricFamilyError {
  try {
    renderPrometheus(families);
  } catch (error) {
    if (error instanceof InvalidMetricFamilyError) return error;
    throw error;
  }
  throw new Error("rendered without complaint");
}

describe("renderPrometheus escapes per the exposition format", () => {
  test("label values escape backslash, double quote and newline; HELP escapes backslash and newline", async () => {
    const text = renderPrometheus([
      {
        name: "agentd_test_total",
        help: 'Help with a \\ backslash,\na newline and "quotes".',
        type: "counter",
        samples: [{ labels: { model: 'a"b\\c\nd', n: 3 }, value: 2 }],
      },
    ]);
    expect(text).toBe(
      [
        '# HELP agentd_test_total Help with a \\\\ backslash,\\na newline and "quotes".',
        "# TYPE agentd_test_total counter",
        'agentd_test_total{model="a\\"b\\\\c\\nd",n="3"} 2',
        "",
      ].join("\n"),
    );
    const checked = await promtool(["check", "metrics"], text);
    expect(checked.output).toBe("");
    expect(checked.code).toBe(0);
  });

  test("a family without samples is its HELP and TYPE; no family is no text", () => {
    expect(renderPrometheus([{ name: "agentd_x", help: "X.", type: "gauge", samples: [] }])).toBe(
      "# HELP agentd_x X.\n# TYPE agentd_x gauge\n",
    );
    expect(renderPrometheus([])).toBe("");
  });
});

describe("renderPrometheus refuses what the format cannot carry", () => {
  test.each([["agentd-bad_total"], ["1agentd_total"], [""], ["agentd total"], ['agentd_"x']])("metric name %p", (name) => {
    const error = refusal([counter(name)]);
    expect(error.code).toBe("internal_error");
    expect(error.message).toContain("not a valid metric name");
  });

  test.each([["bad-label"], ["__reserved"], ["1st"], ["a b"], [""]])("label name %p", (label) => {
    expect(refusal([counter("agentd_ok_total", { [label]: "v" })]).message).toContain("not a valid label name");
  });

  test("le outside a histogram's buckets, a bucket without le, a suffix on a counter, a histogram series without one", () => {
    expect(refusal([counter("agentd_ok_total", { le: "1" })]).message).toContain("le is reserved");
    const histogram = (sample: MetricFamily["samples"][number]): MetricFamily => ({
      name: "agentd_h_seconds",
      help: "H.",
      type: "histogram",
      samples: [sample],
    });
    expect(refusal([histogram({ suffix: "_bucket", value: 1 })]).message).toContain("needs its le label");
    expect(refusal([histogram({ value: 1 })]).message).toContain("needs _bucket, _sum or _count");
    expect(refusal([{ ...counter("agentd_ok_total"), samples: [{ suffix: "_sum", value: 1 }] }]).message).toContain("only a histogram");
  });

  test("the same family twice", () => {
    expect(refusal([counter("agentd_twice_total"), counter("agentd_twice_total")]).message).toContain("written twice");
  });

  test("a family kept in memory refuses a bad name when it is made, not at the first scrape", () => {
    expect(() => new CounterFamily("agentd-bad", "B.")).toThrow(InvalidMetricFamilyError);
    expect(() => new GaugeFamily("", "B.")).toThrow(InvalidMetricFamilyError);
    expect(() => new HistogramFamily("agentd bad", "B.", [1])).toThrow(InvalidMetricFamilyError);
    for (const bounds of [[1, 1], [2, 1], [Number.NaN]])
      expect(() => new HistogramFamily("agentd_wait_seconds", "W.", bounds)).toThrow("bucket bounds must rise");
  });
});

describe("families kept in memory", () => {
  test("a counter counts per label set, whatever object carries it; a gauge is set", () => {
    const requests = new CounterFamily("agentd_req_total", "R.", [{ outcome: "ok" }, { outcome: "error" }]);
    requests.inc({ outcome: "error" });
    requests.inc({ outcome: "error" }, 2);
    requests.inc({ outcome: "gone" });
    expect(requests.family().samples).toEqual([
      { labels: { outcome: "ok" }, value: 0 },
      { labels: { outcome: "error" }, value: 3 },
      { labels: { outcome: "gone" }, value: 1 },
    ]);
    const open = new GaugeFamily("agentd_open", "O.");
    open.set({}, 4);
    open.set({}, 3);
    expect(open.family()).toEqual({ name: "agentd_open", help: "O.", type: "gauge", samples: [{ labels: {}, value: 3 }] });
  });

  test("a label value that looks like a separator does not join two label sets", () => {
    const family = new CounterFamily("agentd_pairs_total", "P.");
    family.inc({ a: "x\u0001b\u0000y" });
    family.inc({ a: "x", b: "y" });
    family.inc({ a: "x\u00001:y" });
    family.inc({ a: "x", b: "y" });
    expect(family.family().samples.map((sample) => sample.value)).toEqual([1, 2, 1]);
  });

  test("a histogram's buckets are cumulative, end in +Inf, and carry sum and count; promtool reads it", async () => {
    const h = new HistogramFamily("agentd_wait_seconds", "W.", [1, 5]);
    for (const value of [0.5, 1, 3, 60]) h.observe({ decision: 'al"low' }, value);
    const text = renderPrometheus([h.family()]);
    expect(text.split("\n").slice(2, -1)).toEqual([
      'agentd_wait_seconds_bucket{decision="al\\"low",le="1"} 2',
      'agentd_wait_seconds_bucket{decision="al\\"low",le="5"} 3',
      'agentd_wait_seconds_bucket{decision="al\\"low",le="+Inf"} 4',
      'agentd_wait_seconds_sum{decision="al\\"low"} 64.5',
      'agentd_wait_seconds_count{decision="al\\"low"} 4',
    ]);
    const checked = await promtool(["check", "metrics"], text);
    expect(checked.output).toBe("");
    expect(checked.code).toBe(0);
  });
});
