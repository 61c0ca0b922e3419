import { mapEntry, newMap } from "../../core/collections/index.ts";

/**
 * Per provider and model, how answers to requests that offered tools came out: calls found in
 * text, calls repaired, markup that did not parse. Plain counters, updated once per answer; the
 * rates are computed only when someone reads the summary.
 */

/** What one answer held, as counts (only whether each is above zero matters here). */
export interface ToolAnswerFindings {
  textCalls: number;
  repairs: number;
  unparsed: number;
  /** The format of the first unparseable block, when there was one. */
  unparsedFormat: string | undefined;
}

/** One model's row under its provider on /status. */
export interface ToolCallModelSummary {
  model: string;
  /** Answers to requests that offered tools, where text was read for calls. */
  answers: number;
  /** Answers with at least one call found in text, repaired, or unparseable: each a subset of `answers`. */
  text_calls: number;
  repaired: number;
  unparsed: number;
  /** The shares of `answers`, 0 to 1, rounded to 4 places. */
  text_call_rate: number;
  repair_rate: number;
  unparsed_rate: number;
  last_unparsed_format: string | null;
  /** Epoch ms of the latest unparseable answer. */
  last_unparsed_at: number | null;
}

class ModelCounts {
  answers = 0;
  textCalls = 0;
  repaired = 0;
  unparsed = 0;
  lastUnparsedFormat: string | null = null;
  lastUnparsedAt: number | null = null;
}

export class ToolCallStats {
  readonly #byProvider = new Map<string, Map<string, ModelCounts>>();

  /** `model` is already capped by the caller (the metrics' series cap), so the maps stay bounded. */
  record(provider: string, model: string, findings: ToolAnswerFindings, now?: number): void {
    const byModel = mapEntry(this.#byProvider, provider, newMap<string, ModelCounts>);
    let counts = byModel.get(model);
    if (!counts) {
      counts = new ModelCounts();
      byModel.set(model, counts);
    }
    counts.answers++;
    if (findings.textCalls > 0) counts.textCalls++;
    if (findings.repairs > 0) counts.repaired++;
    if (findings.unparsed > 0) {
      counts.unparsed++;
      counts.lastUnparsedFormat = findings.unparsedFormat ?? null;
      counts.lastUnparsedAt = now ?? Date.now();
    }
  }

  /** One row per model this provider answered, the most unparseable first. */
  forProvider(provider: string): ToolCallModelSummary[] {
    const rows: ToolCallModelSummary[] = [];
    for (const [model, c] of this.#byProvider.get(provider) ?? [])
      rows.push({
        model,
        answers: c.answers,
        text_calls: c.textCalls,
        repaired: c.repaired,
        unparsed: c.unparsed,
        text_call_rate: rate(c.textCalls, c.answers),
        repair_rate: rate(c.repaired, c.answers),
        unparsed_rate: rate(c.unparsed, c.answers),
        last_unparsed_format: c.lastUnparsedFormat,
        last_unparsed_at: c.lastUnparsedAt,
      });
    return rows.sort((a, b) => b.unparsed_rate - a.unparsed_rate || b.answers - a.answers);
  }
}

function rate(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000;
}
