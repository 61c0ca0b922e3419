/**
 * Counters, gauges and histograms keyed by a label set, rendered as Prometheus text. A label set is
 * written once as its text (`provider="a",model="b"`) by `labelText`, so a hot path bumps a map
 * entry and escapes nothing.
 */

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** `k="v",…` with the values escaped; "" for no labels. */
export function labelText(labels: Readonly<Record<string, string | number>>): string {
  let text = "";
  for (const key in labels) text += `${text ? "," : ""}${key}="${escapeLabel(String(labels[key]))}"`;
  return text;
}

function series(name: string, labels: string): string {
  return labels ? `${name}{${labels}}` : name;
}

export class CounterFamily {
  readonly #values = new Map<string, number>();

  /**
   * `known` are label sets (as `labelText` writes them) shown at 0 until their first increment, so
   * `rate()` and alerts on them work from the first scrape rather than from the first event.
   */
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "counter" | "gauge" = "counter",
    known: readonly string[] = [],
  ) {
    for (const labels of known) this.#values.set(labels, 0);
  }

  inc(labels: string, by = 1): void {
    this.#values.set(labels, (this.#values.get(labels) ?? 0) + by);
  }

  set(labels: string, value: number): void {
    this.#values.set(labels, value);
  }

  get size(): number {
    return this.#values.size;
  }

  text(lines: string[]): void {
    lines.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`);
    for (const [labels, value] of this.#values) lines.push(`${series(this.name, labels)} ${value}`);
  }
}

class Buckets {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(size: number) {
    this.counts = new Float64Array(size);
  }
}

export class HistogramFamily {
  readonly #values = new Map<string, Buckets>();
  readonly #le: string[];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {
    this.#le = buckets.map(String);
  }

  observe(labels: string, value: number): void {
    let h = this.#values.get(labels);
    if (!h) {
      h = new Buckets(this.buckets.length);
      this.#values.set(labels, h);
    }
    h.sum += value;
    h.count++;
    // Buckets are cumulative: each one counts every value at or below its bound.
    for (let i = this.buckets.length - 1; i >= 0 && value <= this.buckets[i]!; i--) h.counts[i]!++;
  }

  get size(): number {
    return this.#values.size;
  }

  text(lines: string[]): void {
    lines.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`);
    for (const [labels, h] of this.#values) {
      const sep = labels ? "," : "";
      for (let i = 0; i < this.#le.length; i++) lines.push(`${this.name}_bucket{${labels}${sep}le="${this.#le[i]}"} ${h.counts[i]}`);
      lines.push(
        `${this.name}_bucket{${labels}${sep}le="+Inf"} ${h.count}`,
        `${series(`${this.name}_sum`, labels)} ${h.sum}`,
        `${series(`${this.name}_count`, labels)} ${h.count}`,
      );
    }
  }
}

/** Renders families in order as one text block ending in a newline. */
export function familiesText(families: ReadonlyArray<{ text(lines: string[]): void }>): string {
  const lines: string[] = [];
  for (const family of families) family.text(lines);
  return lines.length ? `${lines.join("\n")}\n` : "";
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
