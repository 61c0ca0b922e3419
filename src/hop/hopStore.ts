import type { Database } from "bun:sqlite";

export interface HopRecord {
  name: string;
  destination: string;
  via: string[];
  /** The local private key file the hop was opened with (a path, never key material). */
  identity: string | null;
  state: string;
  mode: string | null;
  remote_version: string | null;
  remote_platform: string | null;
  opened_at: number;
  last_change: number;
  last_error: string | null;
}

interface HopRow extends Omit<HopRecord, "via"> {
  via: string;
}

/**
 * The states of a hop that was up, or coming back, when its worker last stopped or died. A hop
 * the user closed (or that gave up) is `closed`; one still on its first open is `connecting`.
 */
export const RESUMABLE_STATES = ["connected", "reconnecting", "fallback"] as const;

/** The hops table: one row per hop name, its latest state; the live connection is in memory. */
export class HopStore {
  constructor(private readonly db: Database) {}

  save(record: HopRecord): void {
    this.db
      .query(
        `INSERT INTO hops (name, destination, via, identity, state, mode, remote_version, remote_platform, opened_at, last_change, last_error)
         VALUES ($name, $destination, $via, $identity, $state, $mode, $remote_version, $remote_platform, $opened_at, $last_change, $last_error)
         ON CONFLICT(name) DO UPDATE SET destination = excluded.destination, via = excluded.via, identity = excluded.identity,
           state = excluded.state, mode = excluded.mode, remote_version = excluded.remote_version,
           remote_platform = excluded.remote_platform, opened_at = excluded.opened_at,
           last_change = excluded.last_change, last_error = excluded.last_error`,
      )
      .run({ ...record, via: JSON.stringify(record.via) });
  }

  list(): HopRecord[] {
    return this.db
      .query<HopRow, []>("SELECT * FROM hops ORDER BY opened_at DESC")
      .all()
      .map((row) => ({ ...row, via: JSON.parse(row.via) as string[] }));
  }

  /** Hops to bring back at start-up: the previous worker stopped or died while they were open. */
  resumable(): HopRecord[] {
    return this.list().filter((record) => (RESUMABLE_STATES as readonly string[]).includes(record.state));
  }

  /** At start-up: a first open the previous worker did not finish is not retried. */
  closeUnfinishedOpens(reason: string, now: number): void {
    this.db
      .query("UPDATE hops SET state = 'closed', last_change = $now, last_error = $reason WHERE state = 'connecting'")
      .run({ now, reason });
  }

  /** Forgets closed hops that failed before `before`; returns their names. */
  expireFailed(before: number): string[] {
    return this.db
      .query<{ name: string }, { before: number }>(
        "DELETE FROM hops WHERE state = 'closed' AND last_error IS NOT NULL AND last_change < $before RETURNING name",
      )
      .all({ before })
      .map((row) => row.name);
  }

  /** Marks one hop closed without a live connection (its stored spec can no longer be used). */
  markClosed(name: string, reason: string, now: number): void {
    this.db
      .query("UPDATE hops SET state = 'closed', last_change = $now, last_error = $reason WHERE name = $name")
      .run({ name, now, reason });
  }
}
