import type { Migration } from "../core/store/index.ts";

/**
 * Hop's tables (versions 400–499). The remote token is never stored: hops bind the remote to
 * loopback. `identity` is the local key file's path, so a worker restart can reopen the hop.
 */
export const hopMigrations: readonly Migration[] = [
  {
    version: 400,
    name: "hops",
    sql: `CREATE TABLE hops (
      name TEXT PRIMARY KEY,
      destination TEXT NOT NULL,
      via TEXT NOT NULL DEFAULT '[]',
      state TEXT NOT NULL,
      mode TEXT,
      remote_version TEXT,
      remote_platform TEXT,
      opened_at INTEGER NOT NULL,
      last_change INTEGER NOT NULL,
      last_error TEXT
    )`,
  },
  {
    version: 401,
    name: "hops_identity",
    sql: "ALTER TABLE hops ADD COLUMN identity TEXT",
  },
];
