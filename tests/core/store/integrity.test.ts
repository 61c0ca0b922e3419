import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { baseMigrations, checkStoreIntegrity, openStore, StoreCorruptError } from "../../../src/core/store/index.ts";
import { damageMiddlePage, writeGarbageStore } from "../../support/corruptStore.ts";
import { makeTempDir, removeTempDirs } from "../../support/tempDir.ts";

afterAll(removeTempDirs);

function freshStore(): string {
  const path = join(makeTempDir(), "agentd.db");
  openStore({ path, migrations: baseMigrations }).close();
  return path;
}

describe("a damaged store is found at open, with its path and how to recover", () => {
  test("a healthy store passes quick_check", () => {
    const path = freshStore();
    const db = openStore({ path, migrations: baseMigrations });
    expect(() => checkStoreIntegrity(db, path)).not.toThrow();
    db.close();
  });

  test("a damaged page that opening does not read: open succeeds, quick_check throws StoreCorruptError naming the path", () => {
    const path = freshStore();
    damageMiddlePage(path);
    const db = openStore({ path, migrations: baseMigrations });
    let caught: unknown;
    try {
      checkStoreIntegrity(db, path);
    } catch (error) {
      caught = error;
    }
    db.close();
    expect(caught).toBeInstanceOf(StoreCorruptError);
    expect((caught as StoreCorruptError).code).toBe("store_corrupt");
    expect((caught as Error).message).toContain(`the store at ${path} is damaged`);
    expect((caught as Error).message).toContain(`move ${path} aside`);
    expect((caught as Error).message).toContain("agentd will start a fresh store and keep the old one");
  });

  test("a file that is not a database: StoreCorruptError naming the path, not a bare 'file is not a database'", () => {
    const path = join(makeTempDir(), "agentd.db");
    writeGarbageStore(path);
    expect(() => openStore({ path, migrations: baseMigrations })).toThrow(StoreCorruptError);
    expect(() => openStore({ path, migrations: baseMigrations })).toThrow(`the store at ${path} is damaged (file is not a database)`);
  });
});
