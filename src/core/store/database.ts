import { Database } from "bun:sqlite";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { asDiskFull, setStorePathForErrors } from "../errors/index.ts";
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
  if (path !== ":memory:") {
    mkdirSync(dirname(path), { recursive: true });
    setStorePathForErrors(path);
  }
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

const PROBE_BYTES = 4096;

/**
 * Checks that the store accepts a write; used by /health, /readyz and `agentd doctor`. Updating
 * one row can still fit in the WAL's free frames on a full disk, so a page is also written beside
 * the database: that needs a fresh block, as the next real write will. A full disk throws a
 * DiskFullError naming the path.
 */
export function probeStoreWritable(db: Database): void {
  try {
    db.run(
      "INSERT INTO kv (key, value, updated_at) VALUES ('probe', '1', ?) ON CONFLICT(key) DO UPDATE SET updated_at = excluded.updated_at",
      [Date.now()],
    );
  } catch (error) {
    throw asDiskFull(error, db.filename) ?? error;
  }
  if (db.filename === ":memory:" || db.filename === "") return;
  const probe = join(dirname(db.filename), `.write-probe-${process.pid}`);
  try {
    writeFileSync(probe, Buffer.alloc(PROBE_BYTES), { mode: 0o600 });
  } catch (error) {
    throw asDiskFull(error, probe) ?? error;
  } finally {
    rmSync(probe, { force: true });
  }
}
