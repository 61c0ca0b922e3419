import type { Database } from "bun:sqlite";
import { AgentdError } from "../../core/errors/index.ts";

export interface Silence {
  id: number;
  target: string;
  until: number;
  reason: string | null;
  created_at: number;
}

export class SilenceNotFoundError extends AgentdError {
  constructor(id: number) {
    super("silence_not_found", `No silence with id ${id}`);
  }
}

/**
 * Maintenance silences: while one is active for a check, a signal id or a component, the watchdog
 * still records what it sees but neither acts nor alerts. Written by the CLI and the page, read by
 * the supervisor (each lookup is one indexed query, cheap enough per incident decision).
 */
export class SilenceStore {
  constructor(private readonly db: Database) {}

  add(target: string, durationMs: number, reason: string | undefined, now = Date.now()): Silence {
    if (!target.trim()) throw new AgentdError("invalid_silence", "A silence needs a target: a check name, a signal id or a component");
    if (!(durationMs > 0)) throw new AgentdError("invalid_silence", "A silence needs a positive duration");
    return this.db
      .query<Silence, [string, number, string | null, number]>(
        "INSERT INTO watchdog_silences (target, until, reason, created_at) VALUES (?, ?, ?, ?) RETURNING *",
      )
      .get(target.trim(), now + durationMs, reason ?? null, now)!;
  }

  active(now = Date.now()): Silence[] {
    return this.db.query<Silence, [number]>("SELECT * FROM watchdog_silences WHERE until > ? ORDER BY until").all(now);
  }

  remove(id: number): void {
    const result = this.db.run("DELETE FROM watchdog_silences WHERE id = ?", [id]);
    if (result.changes === 0) throw new SilenceNotFoundError(id);
  }

  /** The active silence covering any of the targets (signal id, component, check name). */
  covering(targets: readonly string[], now = Date.now()): Silence | undefined {
    if (targets.length === 0) return undefined;
    const marks = targets.map(() => "?").join(", ");
    return (
      this.db
        .query<Silence, Array<string | number>>(`SELECT * FROM watchdog_silences WHERE until > ? AND target IN (${marks}) LIMIT 1`)
        .get(now, ...targets) ?? undefined
    );
  }
}
