import { checkMetricName, InvalidMetricFamilyError, type Labels, type MetricFamily, type MetricSample } from "./metricFamily.ts";

/**
 * Counters, gauges and histograms a capability keeps in memory as events happen, keyed by label
 * set; `family()` gives them to /metrics at scrape time without any other work.
 */

/**
 * The map key of a label set, in the caller's order (a family's callers keep one). Each value is
 * length-prefixed, so no value a client chose (a model name) can pass for another label set.
 */
function seriesKey(labels: Labels): string {
  let key = "";
  for (const name in labels) {
    const value = String(labels[name]);
    key += `${name}\u0000${value.length}:${value}`;
  }
  return key;
}

interface Value {
  labels: Labels;
  value: number;
}

/**
 * Series by label set. A caller that keeps its label objects (the proxy builds them once per
 * provider and model) is found by identity; any other label set by its key.
 */
class SeriesMap<T> {
  readonly #byKey = new Map<string, T>();
  readonly #byObject = new WeakMap<Labels, T>();

  constructor(private readonly make: (labels: Labels) => T) {}

  get(labels: Labels): T {
    let series = this.#byObject.get(labels);
    if (series) return series;
    const key = seriesKey(labels);
    series = this.#byKey.get(key);
    if (!series) {
      series = this.make(labels);
      this.#byKey.set(key, series);
    }
    this.#byObject.set(labels, series);
    return series;
  }

  get size(): number {
    return this.#byKey.size;
  }

  values(): IterableIterator<T> {
    return this.#byKey.values();
  }
}

class ValueFamily {
  readonly #series = new SeriesMap<Value>((labels) => ({ labels, value: 0 }));

  /**
   * `known` label sets are shown at 0 until their first change, so `rate()` and alerts on them
   * work from the first scrape rather than from the first event.
   */
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "counter" | "gauge",
    known: readonly Labels[],
  ) {
    checkMetricName(name);
    for (const labels of known) this.set(labels, 0);
  }

  set(labels: Labels, value: number): void {
    this.#series.get(labels).value = value;
  }

  protected add(labels: Labels, by: number): void {
    this.#series.get(labels).value += by;
  }

  get size(): number {
    return this.#series.size;
  }

  family(): MetricFamily {
    const samples: MetricSample[] = [];
    for (const { labels, value } of this.#series.values()) samples.push({ labels, value });
    return { name: this.name, help: this.help, type: this.type, samples };
  }
}

/** A count that only goes up while the process lives (Prometheus sees a restart as a reset). */
export class CounterFamily extends ValueFamily {
  constructor(name: string, help: string, known: readonly Labels[] = []) {
    super(name, help, "counter", known);
  }

  inc(labels: Labels = {}, by = 1): void {
    this.add(labels, by);
  }
}

/** A value that goes up and down, set outright. */
export class GaugeFamily extends ValueFamily {
  constructor(name: string, help: string) {
    super(name, help, "gauge", []);
  }
}

class Buckets {
  /** Values in each bucket alone (the last: above every bound); made cumulative only when scraped. */
  readonly counts: Float64Array;
  /** Each bucket's labels with its `le`, then +Inf's: made once, not at every scrape. */
  readonly bucketLabels: Labels[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    le: readonly string[],
  ) {
    this.counts = new Float64Array(le.length + 1);
    this.bucketLabels = [...le, "+Inf"].map((bound) => ({ ...labels, le: bound }));
  }
}

export class HistogramFamily {
  readonly #series: SeriesMap<Buckets>;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {
    checkMetricName(name);
    // observe() counts a value in the first bucket whose bound holds it: the bounds must rise.
    if (buckets.some((bound, i) => !(bound > (buckets[i - 1] ?? Number.NEGATIVE_INFINITY))))
      throw new InvalidMetricFamilyError(name, `bucket bounds must rise: current value is [${buckets.join(", ")}]`);
    const le = buckets.map(String);
    this.#series = new SeriesMap((labels) => new Buckets(labels, le));
  }

  /** One count, in the first bucket whose bound holds the value: a proxied request observes four histograms. */
  observe(labels: Labels, value: number): void {
    const h = this.#series.get(labels);
    h.sum += value;
    h.count++;
    const bounds = this.buckets;
    let i = 0;
    while (i < bounds.length && !(value <= bounds[i]!)) i++;
    h.counts[i]!++;
  }

  family(): MetricFamily {
    const samples: MetricSample[] = [];
    for (const h of this.#series.values()) {
      // Prometheus's buckets are cumulative: each counts every value at or below its bound.
      let below = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        below += h.counts[i]!;
        samples.push({ suffix: "_bucket", labels: h.bucketLabels[i]!, value: below });
      }
      samples.push(
        { suffix: "_bucket", labels: h.bucketLabels[this.buckets.length]!, value: h.count },
        { suffix: "_sum", labels: h.labels, value: h.sum },
        { suffix: "_count", labels: h.labels, value: h.count },
      );
    }
    return { name: this.name, help: this.help, type: "histogram", samples };
  }
}

/** Bucket bounds of the OpenTelemetry GenAI semantic conventions. */
export const GEN_AI_BUCKETS = {
  /** gen_ai.client.operation.duration, seconds. */
  duration: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
  /** gen_ai.server.time_to_first_token, seconds. */
  ttft: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
  /** gen_ai.client.token.usage, tokens. */
  tokens: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
} as const;
