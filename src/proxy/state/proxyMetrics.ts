/** Counters and histograms of proxied requests, rendered as Prometheus text. Hand-written: it is small. */

const BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Model names come from clients; past this many series new ones are counted under "other". */
const MAX_SERIES = 2000;

export type Outcome = "ok" | "error" | "client_gone";

class Histogram {
  readonly counts = new Float64Array(BUCKETS_S.length);
  sum = 0;
  count = 0;

  observe(seconds: number): void {
    this.sum += seconds;
    this.count++;
    for (let i = 0; i < BUCKETS_S.length; i++) if (seconds <= BUCKETS_S[i]!) this.counts[i]!++;
  }
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** Label strings of one provider and model, built once: escaping and joining them per request is wasted work. */
interface Series {
  outcome: Record<Outcome, string>;
  tokensIn: string;
  tokensOut: string;
  provider: string;
}

export class ProxyMetrics {
  readonly #series = new Map<string, Map<string, Series>>();
  readonly #requests = new Map<string, number>();
  readonly #tokens = new Map<string, number>();
  readonly #upstreamErrors = new Map<string, number>();
  readonly #dropped = new Map<string, number>();
  readonly #ttft = new Map<string, Histogram>();
  readonly #total = new Map<string, Histogram>();

  request(
    provider: string,
    model: string,
    outcome: Outcome,
    totalMs: number,
    ttftMs: number | undefined,
    tokensIn: number,
    tokensOut: number,
  ): void {
    const series = this.#seriesFor(provider, model);
    bump(this.#requests, series.outcome[outcome], 1);
    if (tokensIn) bump(this.#tokens, series.tokensIn, tokensIn);
    if (tokensOut) bump(this.#tokens, series.tokensOut, tokensOut);
    histogram(this.#total, series.provider).observe(totalMs / 1000);
    if (ttftMs !== undefined) histogram(this.#ttft, series.provider).observe(ttftMs / 1000);
  }

  upstreamError(provider: string, cause: string): void {
    bump(this.#upstreamErrors, `provider="${escapeLabel(provider)}",cause="${cause}"`, 1);
  }

  /** Field names come from the translators' fixed lists, never from clients, so the series stay few. */
  droppedField(field: string): void {
    bump(this.#dropped, `field="${escapeLabel(field)}"`, 1);
  }

  text(): string {
    const lines: string[] = [];
    counter(lines, "agentd_proxy_requests_total", "Proxied requests by provider, model and outcome.", this.#requests);
    counter(lines, "agentd_proxy_tokens_total", "Tokens reported by upstreams, by direction.", this.#tokens);
    counter(lines, "agentd_proxy_upstream_errors_total", "Failed upstream attempts by provider and cause.", this.#upstreamErrors);
    counter(
      lines,
      "agentd_proxy_dropped_fields_total",
      "Request fields dropped because the upstream's wire cannot carry them, by field.",
      this.#dropped,
    );
    histogramText(lines, "agentd_proxy_ttft_seconds", "Time to the first streamed event, per provider.", this.#ttft);
    histogramText(lines, "agentd_proxy_request_duration_seconds", "Whole request duration, per provider.", this.#total);
    return `${lines.join("\n")}\n`;
  }

  #seriesFor(provider: string, model: string): Series {
    let byModel = this.#series.get(provider);
    if (!byModel) {
      byModel = new Map();
      this.#series.set(provider, byModel);
    }
    let series = byModel.get(model);
    if (series) return series;
    // Past the cap a new model shares the "other" series, and is not remembered under its own name.
    const overflow = this.#requests.size >= MAX_SERIES;
    const labels = `provider="${escapeLabel(provider)}",model="${escapeLabel(overflow ? "other" : model)}"`;
    series = {
      outcome: { ok: `${labels},outcome="ok"`, error: `${labels},outcome="error"`, client_gone: `${labels},outcome="client_gone"` },
      tokensIn: `${labels},direction="in"`,
      tokensOut: `${labels},direction="out"`,
      provider: `provider="${escapeLabel(provider)}"`,
    };
    if (!overflow) byModel.set(model, series);
    return series;
  }
}

function bump(map: Map<string, number>, key: string, by: number): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

function histogram(map: Map<string, Histogram>, key: string): Histogram {
  let h = map.get(key);
  if (!h) {
    h = new Histogram();
    map.set(key, h);
  }
  return h;
}

function counter(lines: string[], name: string, help: string, values: Map<string, number>): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
  for (const [labels, value] of values) lines.push(`${name}{${labels}} ${value}`);
}

function histogramText(lines: string[], name: string, help: string, values: Map<string, Histogram>): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
  for (const [labels, h] of values) {
    for (const [i, le] of BUCKETS_S.entries()) lines.push(`${name}_bucket{${labels},le="${le}"} ${h.counts[i]}`);
    lines.push(`${name}_bucket{${labels},le="+Inf"} ${h.count}`, `${name}_sum{${labels}} ${h.sum}`, `${name}_count{${labels}} ${h.count}`);
  }
}
