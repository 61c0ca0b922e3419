import type { Database } from "bun:sqlite";
import { StoreCorruptError, storeFailure } from "./storeErrors.ts";

/**
 * `PRAGMA quick_check` over the whole file: a damaged page that no query has touched yet is found
 * here, at start, instead of failing requests later. Throws StoreCorruptError naming `path`.
 */
export function checkStoreIntegrity(db: Database, path: string): void {
  let rows: { quick_check: string }[];
  try {
    rows = db.query<{ quick_check: string }, []>("PRAGMA quick_check(5)").all();
  } catch (error) {
    throw storeFailure(path, error);
  }
  const problems = rows.map((row) => row.quick_check).filter((line) => line !== "ok");
  if (problems.length > 0) throw new StoreCorruptError(path, `quick_check: ${problems.join("; ")}`);
}
