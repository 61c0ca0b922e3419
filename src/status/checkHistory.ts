/**
 * The last results of each watchdog check, for the page's history strip. The store keeps only a
 * check's current state (watchdog_check_state), so the status source keeps the history in memory:
 * each time it reads the checks it notes a result that differs from the last one noted (another
 * state, or the same state from a later change). Lost with the worker, and blind between two reads.
 */

/** Results kept per check: as many as the strip shows. */
const HISTORY_LENGTH = 20;

export interface CheckResult {
  state: string;
  /** When the check took this state (its last_change), or when it was first seen so when it has none. */
  at: number;
}

interface ObservedCheck {
  name: string;
  state: string;
  last_change: number | null;
}

export class CheckHistory {
  readonly #byName = new Map<string, CheckResult[]>();

  constructor(private readonly length: number = HISTORY_LENGTH) {}

  /** Notes each check's current result and returns every check's history, oldest first; forgets checks no longer configured. */
  observe(checks: readonly ObservedCheck[], now: number): Map<string, CheckResult[]> {
    const seen = new Set<string>();
    for (const check of checks) {
      seen.add(check.name);
      const results = this.#byName.get(check.name) ?? [];
      const last = results.at(-1);
      const at = check.last_change ?? last?.at ?? now;
      if (!last || last.state !== check.state || at > last.at) results.push({ state: check.state, at });
      this.#byName.set(check.name, results.slice(-this.length));
    }
    for (const name of this.#byName.keys()) if (!seen.has(name)) this.#byName.delete(name);
    return new Map(this.#byName);
  }
}
