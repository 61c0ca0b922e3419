import { CounterFamily, labelText } from "../../core/metrics/index.ts";
import type { BreakerState } from "../upstream/circuitBreaker.ts";
import { GenAiMetrics, type GenAiOperation } from "./genAiMetrics.ts";
import { ToolCallStats, type ToolAnswerFindings } from "./toolCallStats.ts";

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
  providerName: string;
  /** The model as labelled: "other" past the series cap. */
  model: string;
  /** `…,route="…",status="…"` by `route status`. */
  responses: Map<string, string>;
  /** `provider="…",model="…"`, built at this series' first answer to a request that offered tools. */
  toolLabels?: string;
}

/** One finished request, as /metrics counts it. */
export interface MeasuredRequest {
  provider: string;
  model: string;
  /** The route template (`/v1/chat/completions`), never the request's path. */
  route: string;
  operation: GenAiOperation;
  status: number;
  outcome: Outcome;
  totalMs: number;
  ttftMs: number | undefined;
  tokensIn: number;
  tokensOut: number;
  attempts: number;
  /** The provider first in line when another one answered (or failed last). */
  failoverFrom: string | undefined;
}

const BREAKER_STATES: readonly BreakerState[] = ["closed", "open", "half_open"];

export class ProxyMetrics {
  readonly #series = new Map<string, Map<string, Series>>();
  readonly #requests = new Map<string, number>();
  readonly #tokens = new Map<string, number>();
  readonly #upstreamErrors = new Map<string, number>();
  readonly #dropped = new Map<string, number>();
  readonly #ttft = new Map<string, Histogram>();
  readonly #total = new Map<string, Histogram>();
  readonly #responses = new CounterFamily(
    "agentd_proxy_responses_total",
    "Proxied requests by provider, model, route template and HTTP status.",
  );
  readonly #retries = new CounterFamily("agentd_proxy_retries_total", "Upstream attempts beyond the first of a request, by provider.");
  readonly #failovers = new CounterFamily(
    "agentd_proxy_failovers_total",
    "Requests answered (or failed last) by another provider than the first in line, by from and to provider.",
  );
  readonly #genAi = new GenAiMetrics();
  readonly #textToolCalls = new CounterFamily(
    "agentd_proxy_text_tool_calls_total",
    "Tool calls a model wrote in its text and the proxy made structured, by provider, model and format.",
  );
  readonly #toolCallRepairs = new CounterFamily(
    "agentd_proxy_tool_call_repairs_total",
    "Tool calls repaired against the declared tools, by provider, model and kind of repair.",
  );
  readonly #toolAnswers = new CounterFamily(
    "agentd_proxy_tool_answers_total",
    "Answers to requests that offered tools (text read for calls), by provider and model.",
  );
  readonly #toolAnswerFindings = new CounterFamily(
    "agentd_proxy_tool_answer_findings_total",
    "Answers to requests that offered tools with at least one call found in text (text_calls), repaired (repaired) or markup that did not parse (unparsed), by provider, model and finding.",
  );
  readonly #unparsedBlocks = new CounterFamily(
    "agentd_proxy_tool_calls_unparsed_total",
    "Blocks at a tool-call format's marker that did not become calls (the client got them as text), by provider, model and format.",
  );
  /** The same answers per model, for the status summary. */
  readonly toolCalls = new ToolCallStats();

  request(r: MeasuredRequest): void {
    const series = this.#seriesFor(r.provider, r.model);
    bump(this.#requests, series.outcome[r.outcome], 1);
    this.#responses.inc(responseLabels(series, r.route, r.status));
    if (r.tokensIn) bump(this.#tokens, series.tokensIn, r.tokensIn);
    if (r.tokensOut) bump(this.#tokens, series.tokensOut, r.tokensOut);
    histogram(this.#total, series.provider).observe(r.totalMs / 1000);
    if (r.ttftMs !== undefined) histogram(this.#ttft, series.provider).observe(r.ttftMs / 1000);
    if (r.attempts > 1) this.#retries.inc(series.provider, r.attempts - 1);
    if (r.failoverFrom !== undefined) this.#failovers.inc(labelText({ from: r.failoverFrom, to: r.provider }));
    const errorType = r.outcome === "ok" ? undefined : r.outcome === "client_gone" ? "client_gone" : String(r.status);
    this.#genAi.record(
      r.operation,
      r.provider,
      series.model,
      r.totalMs / 1000,
      r.ttftMs === undefined ? undefined : r.ttftMs / 1000,
      r.tokensIn,
      r.tokensOut,
      errorType,
    );
  }

  upstreamError(provider: string, cause: string): void {
    bump(this.#upstreamErrors, `provider="${escapeLabel(provider)}",cause="${cause}"`, 1);
  }

  /** Field names come from the translators' fixed lists, never from clients, so the series stay few. */
  droppedField(field: string): void {
    bump(this.#dropped, `field="${escapeLabel(field)}"`, 1);
  }

  /** Calls found in an answer's text (by format) and repairs made to calls (by kind); both lists come from fixed sets. */
  toolCallText(provider: string, model: string, families: readonly string[], repairs: readonly string[]): void {
    const labels = labelText({ provider, model: this.#seriesFor(provider, model).model });
    for (const format of families) this.#textToolCalls.inc(`${labels},format="${format}"`);
    for (const kind of repairs) this.#toolCallRepairs.inc(`${labels},kind="${kind}"`);
  }

  /**
   * One answer to a request that offered tools, whatever it held: the base of the per-model rates.
   * `unparsedFormats` holds one format per unparseable block (from the fixed family list).
   */
  toolAnswer(provider: string, model: string, findings: ToolAnswerFindings, unparsedFormats: readonly string[]): void {
    const series = this.#seriesFor(provider, model);
    series.toolLabels ??= labelText({ provider, model: series.model });
    const labels = series.toolLabels;
    this.#toolAnswers.inc(labels);
    if (findings.textCalls > 0) this.#toolAnswerFindings.inc(`${labels},finding="text_calls"`);
    if (findings.repairs > 0) this.#toolAnswerFindings.inc(`${labels},finding="repaired"`);
    if (findings.unparsed > 0) this.#toolAnswerFindings.inc(`${labels},finding="unparsed"`);
    for (const format of unparsedFormats) this.#unparsedBlocks.inc(`${labels},format="${format}"`);
    this.toolCalls.record(provider, series.model, findings);
  }

  /** The metrics text, with each provider's breaker state (1 for the state it is in). */
  text(breakers: ReadonlyArray<{ provider: string; state: BreakerState }> = []): string {
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
    this.#responses.text(lines);
    this.#retries.text(lines);
    this.#failovers.text(lines);
    this.#genAi.text(lines);
    this.#textToolCalls.text(lines);
    this.#toolCallRepairs.text(lines);
    this.#toolAnswers.text(lines);
    this.#toolAnswerFindings.text(lines);
    this.#unparsedBlocks.text(lines);
    const breaker = new CounterFamily("agentd_proxy_breaker_state", "Each provider's circuit breaker: 1 for its current state.", "gauge");
    for (const { provider, state } of breakers)
      for (const candidate of BREAKER_STATES) breaker.set(labelText({ provider, state: candidate }), candidate === state ? 1 : 0);
    breaker.text(lines);
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
      providerName: provider,
      model: overflow ? "other" : model,
      responses: new Map(),
    };
    if (!overflow) byModel.set(model, series);
    return series;
  }
}

function responseLabels(series: Series, route: string, status: number): string {
  const key = `${route} ${status}`;
  let labels = series.responses.get(key);
  if (!labels) {
    labels = labelText({ provider: series.providerName, model: series.model, route, status });
    series.responses.set(key, labels);
  }
  return labels;
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
