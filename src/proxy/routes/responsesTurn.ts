import type { Committed } from "../upstream/dispatcher.ts";
import type { ProxyCore } from "../state/proxyCore.ts";

type Json = Record<string, unknown>;

/** One POST /v1/responses from dispatch to its record: what is stored and recorded once the answer is known. */
export interface Turn {
  core: ProxyCore;
  model: string;
  t0: number;
  /** Input items of the whole conversation up to and including this request. */
  history: unknown[];
  store: boolean;
}

function usageOf(response: Json | undefined): { input: number; output: number } {
  const usage = response?.usage as { input_tokens?: number; output_tokens?: number } | undefined;
  return { input: usage?.input_tokens ?? 0, output: usage?.output_tokens ?? 0 };
}

/** Stores a completed response (when the request asked for it) and records the request. */
export function finishTurn(
  turn: Turn,
  committed: Committed,
  response: Json | undefined,
  ttftMs: number | undefined,
  outcome: "ok" | "error" | "client_gone" = "ok",
): void {
  if (response && outcome === "ok" && turn.store) turn.core.responses.save(turn.history, response);
  const usage = usageOf(response);
  turn.core.recorder.record({
    provider: committed.provider,
    model: turn.model,
    outcome,
    status: 200,
    ttftMs,
    totalMs: performance.now() - turn.t0,
    tokensIn: usage.input,
    tokensOut: usage.output,
    attempts: committed.attempts,
    trace: turn.core.traceOf(committed),
  });
}
