import type { Database } from "bun:sqlite";

export interface HopRecord {
  name: string;
  destination: string;
  via: string[];
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

/** The hops table: one row per hop name, its latest state; the live connection is in memory. */
export class HopStore {
  constructor(private readonly db: Database) {}

  save(record: HopRecord): void {
    this.db
      .query(
        `INSERT INTO hops (name, destination, via, state, mode, remote_version, remote_platform, opened_at, last_change, last_error)
         VALUES ($name, $destination, $via, $state, $mode, $remote_version, $remote_platform, $opened_at, $last_change, $last_error)
         ON CONFLICT(name) DO UPDATE SET destination = excluded.destination, via = excluded.via, state = excluded.state, mode = excluded.mode,
           remote_version = excluded.remote_version, remote_platform = excluded.remote_platform, opened_at = excluded.opened_at,
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

  /** At start-up: a previous worker's connections died with it. */
  closeAll(reason: string, now: number): void {
    this.db.query("UPDATE hops SET state = 'closed', last_change = $now, last_error = $reason WHERE state != 'closed'").run({ now, reason });
  }
}
