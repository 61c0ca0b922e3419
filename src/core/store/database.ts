import { Database } from "bun:sqlite";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { AgentdError, asDiskFull, setStorePathForErrors } from "../errors/index.ts";
import { applyMigrations, type Migration } from "./migrations.ts";

export interface OpenStoreOptions {
  path: string;
  migrations: readonly Migration[];
  busyTimeoutMs?: number;
}

export class StoreError extends AgentdError {
  constructor(message: string, cause?: unknown) {
    super("store_error", message, { cause });
  }
}

/**
 * Opens the SQLite store shared by supervisor and worker. WAL lets one process write while the
 * other reads; busy_timeout makes concurrent writers wait instead of surfacing SQLITE_BUSY.
 */
export function openStore(options: OpenStoreOptions): Database {
  if (options.path !== ":memory:") {
    mkdirSync(dirname(options.path), { recursive: true });
    setStorePathForErrors(options.path);
  }
  let db: Database;
  try {
    db = new Database(options.path, { create: true, strict: true });
  } catch (error) {
    throw new StoreError(`Cannot open the store at ${options.path}: ${(error as Error).message}`, error);
  }
  db.run(`PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = NORMAL");
  db.run("PRAGMA foreign_keys = ON");
  applyMigrations(db, options.migrations);
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
