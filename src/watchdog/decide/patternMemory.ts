import type { Database } from "bun:sqlite";
import type { Signal } from "../checks/signal.ts";
import type { ActionName } from "../../core/config/sections/watchdogConfig.ts";

export interface ActionRecord {
  action: ActionName;
  /** For run_command: the configured command the outcomes are about. */
  command: string | null;
  tries: number;
  successes: number;
}

export interface PatternOutcome {
  action: string;
  tier: number;
  verdict: string;
  ts: number;
}

/**
 * The pattern of an incident: the sorted set of its signal ids plus the HTTP statuses seen, so
 * "upstream 500 on any provider" is one pattern however many requests failed.
 */
export function patternOf(signals: Iterable<Pick<Signal, "id" | "fields">>): string {
  const parts = new Set<string>();
  for (const signal of signals) {
    parts.add(signal.id);
    const status = signal.fields.status;
    if (typeof status === "number" && status > 0) parts.add(`http:${status}`);
  }
  return [...parts].sort().join("+");
}

/** Tier 2: verified outcomes of actions per pattern, and the action they recommend. */
export class PatternMemory {
  constructor(private readonly db: Database) {}

  record(
    pattern: string,
    action: ActionName,
    tier: number,
    verdict: "success" | "failed",
    incidentId: number,
    now: number,
    command?: string,
  ): void {
    this.db.run("INSERT INTO watchdog_outcomes (pattern, action, command, tier, verdict, incident_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?)", [
      pattern,
      action,
      command ?? null,
      tier,
      verdict,
      incidentId,
      now,
    ]);
  }

  actions(pattern: string): ActionRecord[] {
    return this.db
      .query<ActionRecord, [string]>(
        "SELECT action, command, count(*) AS tries, sum(verdict = 'success') AS successes FROM watchdog_outcomes WHERE pattern = ? GROUP BY action, command",
      )
      .all(pattern);
  }

  /** The action with enough tries and the best verified success rate at or above the floor. */
  recommend(pattern: string, minTries: number, minRate: number, exclude: readonly string[] = []): ActionRecord | undefined {
    let best: ActionRecord | undefined;
    for (const record of this.actions(pattern)) {
      if (exclude.includes(record.action) || record.tries < minTries || record.successes / record.tries < minRate) continue;
      if (
        !best ||
        record.successes / record.tries > best.successes / best.tries ||
        (record.successes / record.tries === best.successes / best.tries && record.tries > best.tries)
      )
        best = record;
    }
    return best;
  }

  history(pattern: string, limit = 5): PatternOutcome[] {
    return this.db
      .query<PatternOutcome, [string, number]>(
        "SELECT action, tier, verdict, ts FROM watchdog_outcomes WHERE pattern = ? ORDER BY id DESC LIMIT ?",
      )
      .all(pattern, limit);
  }
}
