import type { Logger } from "../../core/log/index.ts";
import type { ProviderRuntime } from "../upstream/providerRuntime.ts";
import type { Outcome, ProxyMetrics } from "./proxyMetrics.ts";
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
}

/** Where one finished request is counted: the `proxy.request` log line, /metrics, the minute rollups. */
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
    this.metrics.request(name, o.model, o.outcome, o.totalMs, o.ttftMs, o.tokensIn, o.tokensOut);
    this.rollups.add(name, o.model, o.outcome === "error", o.ttftMs ?? 0, o.totalMs, o.tokensIn, o.tokensOut);
    if (o.provider && o.outcome === "ok") o.provider.latency.add(o.ttftMs ?? o.totalMs);
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
