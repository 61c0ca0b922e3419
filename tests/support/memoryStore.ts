import { afterAll } from "bun:test";
import { openStore, type Database } from "../../src/core/store/index.ts";
import { allMigrations } from "../../src/daemon/allMigrations.ts";

/** A maker of in-memory stores with every migration applied, all closed after the calling file's tests. */
export function memoryStores(): () => Database {
  const dbs: Database[] = [];
  afterAll(() => {
    for (const db of dbs) db.close();
  });
  return () => {
    const db = openStore({ path: ":memory:", migrations: allMigrations });
    dbs.push(db);
    return db;
  };
}
