import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { checkStoreIntegrity } from "./integrity.ts";
import { applyMigrations, type Migration } from "./migrations.ts";
import { retryWhileBusy } from "./retryWhileBusy.ts";
import { isBusyError, storeFailure } from "./storeErrors.ts";

export interface OpenStoreOptions {
  path: string;
  migrations: readonly Migration[];
  busyTimeoutMs?: number;
  /** How long opening keeps retrying the steps SQLite refuses with SQLITE_BUSY without waiting (WAL switch, migrations). */
  openRetryMs?: number;
  /** Run `PRAGMA quick_check` before migrating, so a damaged file is refused before anything is written to it. */
  quickCheck?: boolean;
}

/**
 * Opens the SQLite store shared by supervisor and worker. WAL lets one process write while the
 * other reads; busy_timeout makes concurrent writers wait instead of surfacing SQLITE_BUSY.
 * Every failure names the path; a damaged file or one that is not a database is a StoreCorruptError.
 */
export function openStore(options: OpenStoreOptions): Database {
  const { path } = options;
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  let db: Database;
  try {
    db = new Database(path, { create: true, strict: true });
  } catch (error) {
    throw storeFailure(path, error);
  }
  try {
    const retryMs = options.openRetryMs ?? 10_000;
    db.run(`PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    // busy_timeout does not cover these two: see retryWhileBusy.
    retryWhileBusy(() => db.run("PRAGMA journal_mode = WAL"), isBusyError, retryMs);
    db.run("PRAGMA synchronous = NORMAL");
    db.run("PRAGMA foreign_keys = ON");
    if (options.quickCheck) checkStoreIntegrity(db, path);
    retryWhileBusy(() => applyMigrations(db, options.migrations), isBusyError, retryMs);
  } catch (error) {
    db.close();
    throw storeFailure(path, error);
  }
  return db;
}

/** Checks that the store accepts a write; used by /readyz and `agentd doctor`. */
export function probeStoreWritable(db: Database): void {
  db.run(
    "INSERT INTO kv (key, value, updated_at) VALUES ('probe', '1', ?) ON CONFLICT(key) DO UPDATE SET updated_at = excluded.updated_at",
    [Date.now()],
  );
}
