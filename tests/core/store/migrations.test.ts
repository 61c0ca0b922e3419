import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import {
  applyMigrations,
  baseMigrations,
  openStore,
  probeStoreWritable,
  recordEvent,
  type Migration,
} from "../../../src/core/store/index.ts";
import { makeTempDir, removeTempDirs } from "../../support/tempDir.ts";

afterAll(removeTempDirs);

const tables = (db: Database) =>
  db
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all()
    .map((r) => r.name);
const versions = (db: Database) =>
  db
    .query<{ version: number }, []>("SELECT version FROM schema_migrations ORDER BY version")
    .all()
    .map((r) => r.version);

describe("openStore and migrations", () => {
  test("from an empty directory: creates the file, WAL, busy_timeout and the base tables", () => {
    const path = join(makeTempDir(), "nested", "agentd.db");
    const db = openStore({ path, migrations: baseMigrations });
    expect(tables(db)).toEqual(["events", "incidents", "kv", "schema_migrations"]);
    expect(versions(db)).toEqual([1]);
    expect(db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()!.journal_mode).toBe("wal");
    expect(db.query<{ timeout: number }, []>("PRAGMA busy_timeout").get()!.timeout).toBe(5000);
    expect(db.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()!.foreign_keys).toBe(1);
    db.close();
  });

  test("re-opening applies nothing twice and keeps the data", () => {
    const path = join(makeTempDir(), "agentd.db");
    const first = openStore({ path, migrations: baseMigrations });
    recordEvent(first, { component: "test", event: "kept", fields: { a: 1 } });
    first.close();
    const second = openStore({ path, migrations: baseMigrations });
    expect(applyMigrations(second, baseMigrations)).toEqual([]);
    expect(versions(second)).toEqual([1]);
    const row = second.query<{ event: string; fields: string; level: string }, []>("SELECT event, fields, level FROM events").get();
    expect(row).toEqual({ event: "kept", fields: '{"a":1}', level: "info" });
    second.close();
  });

  test("migrations apply in version order whatever order they are listed in, and later ones are added on the next start", () => {
    const db = new Database(":memory:", { strict: true });
    const proxy: Migration = {
      version: 100,
      name: "proxy",
      sql: "CREATE TABLE proxy_things (id INTEGER PRIMARY KEY, created_by TEXT NOT NULL)",
    };
    const after: Migration = { version: 101, name: "proxy2", sql: "ALTER TABLE proxy_things ADD COLUMN extra TEXT" };
    expect(applyMigrations(db, [after, proxy, ...baseMigrations])).toEqual([1, 100, 101]);
    const more: Migration = { version: 300, name: "watchdog", sql: "CREATE TABLE watch (id INTEGER PRIMARY KEY)" };
    expect(applyMigrations(db, [...baseMigrations, proxy, after, more])).toEqual([300]);
    expect(versions(db)).toEqual([1, 100, 101, 300]);
    expect(
      db
        .query<{ name: string }, []>("SELECT name FROM pragma_table_info('proxy_things') ORDER BY cid")
        .all()
        .map((r) => r.name),
    ).toEqual(["id", "created_by", "extra"]);
    db.close();
  });

  test("a failing migration leaves nothing behind: neither its first statements nor its version", () => {
    const db = new Database(":memory:", { strict: true });
    applyMigrations(db, baseMigrations);
    const broken: Migration = {
      version: 2,
      name: "broken",
      sql: "CREATE TABLE half_done (x INTEGER); INSERT INTO no_such_table VALUES (1);",
    };
    expect(() => applyMigrations(db, [...baseMigrations, broken])).toThrow(/no_such_table/);
    expect(tables(db)).not.toContain("half_done");
    expect(versions(db)).toEqual([1]);
    db.close();
  });

  test("two migrations with the same version are refused before anything runs", () => {
    const db = new Database(":memory:", { strict: true });
    const a: Migration = { version: 7, name: "a", sql: "CREATE TABLE a (x)" };
    const b: Migration = { version: 7, name: "b", sql: "CREATE TABLE b (x)" };
    expect(() => applyMigrations(db, [a, b])).toThrow('version 7 is used by both "a" and "b"');
    expect(tables(db)).toEqual(["schema_migrations"]);
    db.close();
  });

  test("the readiness probe writes", () => {
    const db = openStore({ path: ":memory:", migrations: baseMigrations });
    probeStoreWritable(db);
    expect(db.query<{ key: string }, []>("SELECT key FROM kv").all()).toEqual([{ key: "probe" }]);
    db.close();
  });

  test("a store path that cannot be opened is a StoreError with code store_error", () => {
    const dir = makeTempDir();
    expect(() => openStore({ path: dir, migrations: baseMigrations })).toThrow(expect.objectContaining({ code: "store_error" }));
  });
});
