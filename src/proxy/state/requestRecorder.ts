import type { Logger } from "../../core/log/index.ts";
import type { ProviderRuntime } from "../upstream/providerRuntime.ts";
import type { Outcome, ProxyMetrics } from "./proxyMetrics.ts";
import type { RequestTrace } from "./requestTrace.ts";
import type { RollupBuffer } from "./rollupBuffer.ts";

export interface RequestOutcome {
  provider: ProviderRuntime | undefined;
  model: string;
  outcome: Outcome;
  status: number;
  ttftMs?: number;
  totalMs: number;
  tokensIn: number;
  tokensOut: number;
  attempts: number;
  /** Its route, operation and span, from where the dispatch began. */
  trace?: RequestTrace;
}

/** Where one finished request is counted: the `proxy.request` log line, /metrics, the minute rollups, and its span ended. */
export class RequestRecorder {
  constructor(
    private readonly logger: Logger,
    private readonly metrics: ProxyMetrics,
    private readonly rollups: RollupBuffer,
  ) {}

  record(o: RequestOutcome): void {
    const name = o.provider?.name ?? "none";
    const ttft = o.ttftMs === undefined ? undefined : round(o.ttftMs);
    const total = round(o.totalMs);
    this.logger.info("proxy.request", {
      provider: name,
      model: o.model,
      status: o.status,
      outcome: o.outcome,
      ttft_ms: ttft,
      total_ms: total,
      tokens_in: o.tokensIn,
      tokens_out: o.tokensOut,
      attempts: o.attempts,
    });
    const trace = o.trace;
    const failoverFrom = o.provider && trace?.firstProvider !== undefined && trace.firstProvider !== name ? trace.firstProvider : undefined;
    this.metrics.request({
      provider: name,
      model: o.model,
      route: trace?.route ?? "unknown",
      operation: trace?.operation ?? "chat",
      status: o.status,
      outcome: o.outcome,
      totalMs: o.totalMs,
      ttftMs: o.ttftMs,
      tokensIn: o.tokensIn,
      tokensOut: o.tokensOut,
      attempts: o.attempts,
      failoverFrom,
    });
    if (trace?.recording) endSpan(trace, o, name, failoverFrom);
    this.rollups.add(name, o.model, o.outcome === "error", o.ttftMs ?? 0, o.totalMs, o.tokensIn, o.tokensOut);
    if (o.provider && o.outcome === "ok") o.provider.latency.add(o.ttftMs ?? o.totalMs);
  }
}

/** The request's `gen_ai` client span, with the GenAI semantic conventions' attribute names. */
function endSpan(trace: RequestTrace, o: RequestOutcome, provider: string, failoverFrom: string | undefined): void {
  const span = trace.span;
  span.setAttributes({
    "gen_ai.provider.name": provider,
    "gen_ai.usage.input_tokens": o.tokensIn,
    "gen_ai.usage.output_tokens": o.tokensOut,
    "gen_ai.response.time_to_first_chunk": o.ttftMs === undefined ? undefined : o.ttftMs / 1000,
    "http.response.status_code": o.status,
    "agentd.proxy.attempts": o.attempts,
    "agentd.proxy.retries": Math.max(0, o.attempts - 1),
    "agentd.proxy.failover": failoverFrom !== undefined,
    "agentd.proxy.failover_from": failoverFrom,
  });
  span.end(o.outcome === "ok" ? undefined : { type: o.outcome === "client_gone" ? "client_gone" : String(o.status) });
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
