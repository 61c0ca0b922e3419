import type { Database } from "bun:sqlite";
import type { CheckRow } from "./checkRow.ts";
import type { DebouncerSnapshot } from "./checkDebouncer.ts";
import type { CheckConfig } from "../../core/config/sections/watchdogConfig.ts";

/** A check's state as the supervisor last knew it: debouncer, last result, failing since. */
export interface SavedCheck {
  debouncer: DebouncerSnapshot;
  row: CheckRow;
}

/**
 * Keeps each check's debounced state across supervisor restarts. A state is only taken back for
 * the same check definition: one whose target changed starts fresh, as a new check would.
 */
export class CheckStateStore {
  constructor(private readonly db: Database) {}

  load(check: CheckConfig): SavedCheck | undefined {
    const row = this.db
      .query<{ config: string; state: string }, [string]>("SELECT config, state FROM watchdog_check_state WHERE name = ?")
      .get(check.name);
    if (!row || row.config !== definitionOf(check)) return undefined;
    return JSON.parse(row.state) as SavedCheck;
  }

  save(check: CheckConfig, saved: SavedCheck, now: number): void {
    this.db.run(
      `INSERT INTO watchdog_check_state (name, config, state, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(name) DO UPDATE SET config = excluded.config, state = excluded.state, updated_at = excluded.updated_at`,
      [check.name, definitionOf(check), JSON.stringify(saved), now],
    );
  }

  /** When each check last ran (Unix ms): a state is saved after every run, stamped with its time. */
  lastRuns(): Map<string, number> {
    const rows = this.db.query<{ name: string; updated_at: number }, []>("SELECT name, updated_at FROM watchdog_check_state").all();
    return new Map(rows.map((row) => [row.name, row.updated_at]));
  }

  /** Forgets checks no longer configured. */
  keepOnly(names: readonly string[]): void {
    this.db.run(`DELETE FROM watchdog_check_state WHERE name NOT IN (${names.map(() => "?").join(", ")})`, [...names]);
  }
}

function definitionOf(check: CheckConfig): string {
  return JSON.stringify(check);
}
