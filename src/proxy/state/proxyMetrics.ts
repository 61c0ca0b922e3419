import { CounterFamily, GaugeFamily, HistogramFamily, type Labels, type MetricFamily } from "../../core/metrics/index.ts";
import { mapEntry, newMap } from "../../core/collections/index.ts";
import type { BreakerState } from "../upstream/circuitBreaker.ts";
import { GenAiMetrics, type GenAiOperation } from "./genAiMetrics.ts";
import { ToolCallStats, type ToolAnswerFindings } from "./toolCallStats.ts";

/** Counters and histograms of proxied requests, kept as they finish and given to /metrics as families. */

const BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Model names come from clients; past this many series new ones are counted under "other". */
const MAX_SERIES = 2000;

export type Outcome = "ok" | "error" | "client_gone";

/** Label sets of one provider and model, built once per series rather than per request. */
interface Series {
  outcome: Record<Outcome, Labels>;
  tokensIn: Labels;
  tokensOut: Labels;
  provider: Labels;
  providerName: string;
  /** The model as labelled: "other" past the series cap. */
  model: string;
  /** `provider, model` with the route and status: by route template, then status. */
  responses: Map<string, Map<number, Labels>>;
  /** `provider, model`, built at this series' first answer to a request that offered tools. */
  toolLabels?: Labels;
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
  readonly #requests = new CounterFamily("agentd_proxy_requests_total", "Proxied requests by provider, model and outcome.");
  readonly #tokens = new CounterFamily("agentd_proxy_tokens_total", "Tokens reported by upstreams, by direction.");
  readonly #upstreamErrors = new CounterFamily("agentd_proxy_upstream_errors_total", "Failed upstream attempts by provider and cause.");
  readonly #dropped = new CounterFamily(
    "agentd_proxy_dropped_fields_total",
    "Request fields dropped because the upstream's wire cannot carry them, by field.",
  );
  readonly #ttft = new HistogramFamily("agentd_proxy_ttft_seconds", "Time to the first streamed event, per provider.", BUCKETS_S);
  readonly #total = new HistogramFamily("agentd_proxy_request_duration_seconds", "Whole request duration, per provider.", BUCKETS_S);
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
    this.#requests.inc(series.outcome[r.outcome]);
    this.#responses.inc(responseLabels(series, r.route, r.status));
    if (r.tokensIn) this.#tokens.inc(series.tokensIn, r.tokensIn);
    if (r.tokensOut) this.#tokens.inc(series.tokensOut, r.tokensOut);
    this.#total.observe(series.provider, r.totalMs / 1000);
    if (r.ttftMs !== undefined) this.#ttft.observe(series.provider, r.ttftMs / 1000);
    if (r.attempts > 1) this.#retries.inc(series.provider, r.attempts - 1);
    if (r.failoverFrom !== undefined) this.#failovers.inc({ from: r.failoverFrom, to: r.provider });
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
    this.#upstreamErrors.inc({ provider, cause });
  }

  /** Field names come from the translators' fixed lists, never from clients, so the series stay few. */
  droppedField(field: string): void {
    this.#dropped.inc({ field });
  }

  /** Calls found in an answer's text (by format) and repairs made to calls (by kind); both lists come from fixed sets. */
  toolCallText(provider: string, model: string, families: readonly string[], repairs: readonly string[]): void {
    const labelled = this.#seriesFor(provider, model).model;
    for (const format of families) this.#textToolCalls.inc({ provider, model: labelled, format });
    for (const kind of repairs) this.#toolCallRepairs.inc({ provider, model: labelled, kind });
  }

  /**
   * One answer to a request that offered tools, whatever it held: the base of the per-model rates.
   * `unparsedFormats` holds one format per unparseable block (from the fixed family list).
   */
  toolAnswer(provider: string, model: string, findings: ToolAnswerFindings, unparsedFormats: readonly string[]): void {
    const series = this.#seriesFor(provider, model);
    series.toolLabels ??= { provider, model: series.model };
    const labels = series.toolLabels;
    this.#toolAnswers.inc(labels);
    if (findings.textCalls > 0) this.#toolAnswerFindings.inc({ ...labels, finding: "text_calls" });
    if (findings.repairs > 0) this.#toolAnswerFindings.inc({ ...labels, finding: "repaired" });
    if (findings.unparsed > 0) this.#toolAnswerFindings.inc({ ...labels, finding: "unparsed" });
    for (const format of unparsedFormats) this.#unparsedBlocks.inc({ ...labels, format });
    this.toolCalls.record(provider, series.model, findings);
  }

  /** The families, with each provider's breaker state (1 for the state it is in). */
  families(breakers: ReadonlyArray<{ provider: string; state: BreakerState }> = []): MetricFamily[] {
    const breaker = new GaugeFamily("agentd_proxy_breaker_state", "Each provider's circuit breaker: 1 for its current state.");
    for (const { provider, state } of breakers)
      for (const candidate of BREAKER_STATES) breaker.set({ provider, state: candidate }, candidate === state ? 1 : 0);
    return [
      this.#requests.family(),
      this.#tokens.family(),
      this.#upstreamErrors.family(),
      this.#dropped.family(),
      this.#ttft.family(),
      this.#total.family(),
      this.#responses.family(),
      this.#retries.family(),
      this.#failovers.family(),
      ...this.#genAi.families(),
      this.#textToolCalls.family(),
      this.#toolCallRepairs.family(),
      this.#toolAnswers.family(),
      this.#toolAnswerFindings.family(),
      this.#unparsedBlocks.family(),
      breaker.family(),
    ];
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
    const labelled = overflow ? "other" : model;
    series = {
      outcome: {
        ok: { provider, model: labelled, outcome: "ok" },
        error: { provider, model: labelled, outcome: "error" },
        client_gone: { provider, model: labelled, outcome: "client_gone" },
      },
      tokensIn: { provider, model: labelled, direction: "in" },
      tokensOut: { provider, model: labelled, direction: "out" },
      provider: { provider },
      providerName: provider,
      model: labelled,
      responses: new Map(),
    };
    if (!overflow) byModel.set(model, series);
    return series;
  }
}

function responseLabels(series: Series, route: string, status: number): Labels {
  const byStatus = mapEntry(series.responses, route, newMap<number, Labels>);
  let labels = byStatus.get(status);
  if (!labels) {
    labels = { provider: series.providerName, model: series.model, route, status };
    byStatus.set(status, labels);
  }
  return labels;
}
