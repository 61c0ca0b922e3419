import type { Database } from "bun:sqlite";

export interface StoredQuirk {
  provider: string;
  param: string;
  learned_at: number;
  expires_at: number;
  detail: string;
}

/** Learned quirks persist across restarts, each for a TTL: providers fix their servers too. */
export class QuirkStore {
  constructor(
    private readonly db: Database,
    private readonly ttlMs: number,
  ) {}

  live(now = Date.now()): StoredQuirk[] {
    return this.db
      .query<StoredQuirk, [number]>(
        "SELECT provider, param, learned_at, expires_at, detail FROM proxy_quirks WHERE expires_at > ? ORDER BY provider, param",
      )
      .all(now);
  }

  remember(provider: string, param: string, detail: string, now = Date.now()): void {
    this.db
      .query(
        "INSERT INTO proxy_quirks (provider, param, learned_at, expires_at, detail) VALUES ($provider, $param, $now, $expires, $detail) ON CONFLICT (provider, param) DO UPDATE SET learned_at = excluded.learned_at, expires_at = excluded.expires_at, detail = excluded.detail",
      )
      .run({ provider, param, now, expires: now + this.ttlMs, detail: detail.slice(0, 500) });
  }
}

/** Forgets learned quirks, of one provider or all (`agentd providers quirks --clear`); returns how many. */
export function clearQuirks(db: Database, provider?: string): number {
  const result =
    provider === undefined ? db.run("DELETE FROM proxy_quirks") : db.run("DELETE FROM proxy_quirks WHERE provider = ?", [provider]);
  return result.changes;
}

export function listQuirks(db: Database, now = Date.now()): StoredQuirk[] {
  return new QuirkStore(db, 0).live(now);
}
