import type { Database } from "bun:sqlite";
import type { Signal } from "../checks/signal.ts";
import type { ActionName } from "../../core/config/sections/watchdogConfig.ts";
import { learnable } from "./alertPolicy.ts";

/**
 * What a learned outcome is about: the component that failed and the pattern of its signals. A fix
 * proven for `check:svc` says nothing about `check:billing`, whose signals look the same.
 */
export interface LearnKey {
  component: string;
  pattern: string;
}

export interface ActionRecord {
  action: ActionName;
  /** For run_command: the configured command the outcomes are about. */
  command: string | null;
  tries: number;
  successes: number;
  /** The most recent verdict: a fix whose last try failed is demoted until it works again. */
  last_verdict: "success" | "failed";
}

export interface PatternOutcome {
  action: string;
  tier: number;
  verdict: string;
  ts: number;
}

/** A learned fix as a person reviews it: what, for what, how well, from which incidents. */
export interface LearnedFix extends ActionRecord {
  component: string;
  pattern: string;
  incident_ids: number[];
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

/** Signals about how a check behaves, not about what failed. */
export function isMetaSignal(id: string): boolean {
  return id === "check.flapping";
}

/**
 * What an incident's outcomes are learned under: its component (the incident's fingerprint) and
 * pattern. A check that flaps while its fix is verified (failing, fixed, failing) is still the same
 * failure of the same check.
 */
export function learnKeyOf(incident: { fingerprint: string; pattern: string }): LearnKey {
  const kept = incident.pattern.split("+").filter((part) => !isMetaSignal(part));
  return { component: incident.fingerprint, pattern: kept.length > 0 ? kept.join("+") : incident.pattern };
}

/** The key of tier 3's answer cache: the same as what tier 2 learns under. */
export function answerKey(key: LearnKey): string {
  return `${key.component}|${key.pattern}`;
}

const GROUPED = `SELECT component, pattern, action, command, count(*) AS tries, sum(verdict = 'success') AS successes,
  (SELECT o2.verdict FROM watchdog_outcomes o2 WHERE o2.component = o.component AND o2.pattern = o.pattern AND o2.action = o.action
     AND o2.command IS o.command ORDER BY o2.id DESC LIMIT 1) AS last_verdict,
  group_concat(DISTINCT incident_id) AS incidents
  FROM watchdog_outcomes o`;

interface GroupedRow extends Omit<LearnedFix, "incident_ids"> {
  incidents: string | null;
}

/** Tier 2: verified outcomes of actions per (component, pattern), and the action they recommend. */
export class PatternMemory {
  constructor(private readonly db: Database) {}

  /** Records a verdict; alert and ignore are never recorded, since nothing verifies them. */
  record(
    key: LearnKey,
    action: ActionName,
    tier: number,
    verdict: "success" | "failed",
    incidentId: number,
    now: number,
    command?: string,
  ): boolean {
    if (!learnable(action)) return false;
    this.db.run(
      "INSERT INTO watchdog_outcomes (component, pattern, action, command, tier, verdict, incident_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      [key.component, key.pattern, action, command ?? null, tier, verdict, incidentId, now],
    );
    return true;
  }

  actions(key: LearnKey): ActionRecord[] {
    return this.#grouped("WHERE component = ? AND pattern = ?", [key.component, key.pattern]).map(
      ({ action, command, tries, successes, last_verdict }) => ({ action, command, tries, successes, last_verdict }),
    );
  }

  /**
   * The fix with enough tries and the best verified success rate at or above the floor, whose last
   * try worked: a failed verification demotes a fix at once, whatever its record before.
   */
  recommend(key: LearnKey, minTries: number, minRate: number, exclude: readonly string[] = []): ActionRecord | undefined {
    let best: ActionRecord | undefined;
    for (const record of this.actions(key)) {
      if (!learnable(record.action) || exclude.includes(record.action) || record.last_verdict !== "success") continue;
      if (record.tries < minTries || record.successes / record.tries < minRate) continue;
      if (
        !best ||
        record.successes / record.tries > best.successes / best.tries ||
        (record.successes / record.tries === best.successes / best.tries && record.tries > best.tries)
      )
        best = record;
    }
    return best;
  }

  history(key: LearnKey, limit = 5): PatternOutcome[] {
    return this.db
      .query<PatternOutcome, [string, string, number]>(
        "SELECT action, tier, verdict, ts FROM watchdog_outcomes WHERE component = ? AND pattern = ? ORDER BY id DESC LIMIT ?",
      )
      .all(key.component, key.pattern, limit);
  }

  /** What was learned, for one component or all, with the incidents each verdict came from. */
  learned(component?: string): LearnedFix[] {
    return component === undefined ? this.#grouped("WHERE component IS NOT NULL", []) : this.#grouped("WHERE component = ?", [component]);
  }

  /**
   * Forgets what was learned for a component (one pattern of it, when given), and tier 3's saved
   * answers for the same, which would otherwise repeat it; returns how many verdicts went.
   */
  forget(component: string, pattern?: string): number {
    if (pattern === undefined) {
      const prefix = answerKey({ component, pattern: "" });
      this.db.run("DELETE FROM watchdog_ai_cache WHERE substr(fingerprint, 1, ?) = ?", [prefix.length, prefix]);
      return this.db.run("DELETE FROM watchdog_outcomes WHERE component = ?", [component]).changes;
    }
    this.db.run("DELETE FROM watchdog_ai_cache WHERE fingerprint = ?", [answerKey({ component, pattern })]);
    return this.db.run("DELETE FROM watchdog_outcomes WHERE component = ? AND pattern = ?", [component, pattern]).changes;
  }

  #grouped(where: string, params: string[]): LearnedFix[] {
    return this.db
      .query<GroupedRow, string[]>(`${GROUPED} ${where} GROUP BY component, pattern, action, command ORDER BY component, pattern, action`)
      .all(...params)
      .map(({ incidents, ...row }) => ({
        ...row,
        incident_ids: incidents ? incidents.split(",").map(Number) : [],
      }));
  }
}
