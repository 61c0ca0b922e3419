import type { Migration } from "./migrations.ts";

export const baseMigrations: readonly Migration[] = [
  {
    version: 1,
    name: "base",
    sql: `
      CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at INTEGER NOT NULL);
      CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts INTEGER NOT NULL,
        component TEXT NOT NULL,
        event TEXT NOT NULL,
        level TEXT NOT NULL DEFAULT 'info',
        fields TEXT NOT NULL DEFAULT '{}'
      );
      CREATE INDEX events_ts ON events (ts);
      CREATE TABLE incidents (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        dedup_key TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        category TEXT NOT NULL,
        severity TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'acknowledged', 'resolved')),
        first_seen INTEGER NOT NULL,
        last_seen INTEGER NOT NULL,
        count INTEGER NOT NULL DEFAULT 1,
        tier INTEGER,
        action TEXT,
        verdict TEXT,
        details TEXT NOT NULL DEFAULT '{}'
      );
      CREATE INDEX incidents_state ON incidents (state, last_seen);
    `,
  },
];
