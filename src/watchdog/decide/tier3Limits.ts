import type { Database } from "bun:sqlite";
import type { WatchdogConfig } from "../../core/config/sections/watchdogConfig.ts";

export type Tier3Refusal = "rate_limit_minute" | "rate_limit_day" | "budget_exhausted";

export interface UsageOutcome {
  promptTokens: number;
  completionTokens: number;
  outcome: string;
}

const MINUTE = 60_000;
const DAY = 86_400_000;

function monthStart(now: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** The model's limits: calls a minute, calls a day, tokens a month; every call is recorded with its cost. */
export class Tier3Usage {
  constructor(
    private readonly db: Database,
    private readonly config: WatchdogConfig["tier3"],
  ) {}

  /** Why a call may not be made now, or undefined when it may. */
  refusal(now: number): Tier3Refusal | undefined {
    const calls = this.db.query<{ n: number }, [number]>("SELECT count(*) AS n FROM watchdog_ai_usage WHERE ts > ?");
    if (calls.get(now - MINUTE)!.n >= this.config.calls_per_minute) return "rate_limit_minute";
    if (calls.get(now - DAY)!.n >= this.config.calls_per_day) return "rate_limit_day";
    if (this.tokensThisMonth(now) >= this.config.monthly_token_budget) return "budget_exhausted";
    return undefined;
  }

  tokensThisMonth(now: number): number {
    return (
      this.db
        .query<{ n: number | null }, [number]>("SELECT sum(prompt_tokens + completion_tokens) AS n FROM watchdog_ai_usage WHERE ts >= ?")
        .get(monthStart(now))!.n ?? 0
    );
  }

  /**
   * Counts a call against the limits as it starts: calls run outside the watchdog's queue, so one
   * still under way must already hold its place or a second could slip past the per-minute limit.
   */
  begin(incidentId: number, model: string, now: number): number {
    return this.db
      .query<{ id: number }, [number, number, string]>(
        "INSERT INTO watchdog_ai_usage (ts, incident_id, model, outcome) VALUES (?, ?, ?, 'pending') RETURNING id",
      )
      .get(now, incidentId, model)!.id;
  }

  finish(id: number, entry: UsageOutcome): void {
    const tokens = entry.promptTokens + entry.completionTokens;
    const cost = (tokens / 1000) * this.config.price_per_1k_tokens;
    this.db.run("UPDATE watchdog_ai_usage SET prompt_tokens = ?, completion_tokens = ?, cost = ?, outcome = ? WHERE id = ?", [
      entry.promptTokens,
      entry.completionTokens,
      cost,
      entry.outcome,
      id,
    ]);
  }

  cached(fingerprint: string, now: number): string | undefined {
    return this.db
      .query<{ answer: string }, [string, number]>("SELECT answer FROM watchdog_ai_cache WHERE fingerprint = ? AND expires_at > ?")
      .get(fingerprint, now)?.answer;
  }

  forget(fingerprint: string): void {
    this.db.run("DELETE FROM watchdog_ai_cache WHERE fingerprint = ?", [fingerprint]);
  }

  remember(fingerprint: string, answer: string, now: number): void {
    if (this.config.cache_ttl_s <= 0) return;
    this.db.run(
      "INSERT INTO watchdog_ai_cache (fingerprint, answer, expires_at) VALUES (?, ?, ?) ON CONFLICT(fingerprint) DO UPDATE SET answer = excluded.answer, expires_at = excluded.expires_at",
      [fingerprint, answer, now + this.config.cache_ttl_s * 1000],
    );
  }
}
