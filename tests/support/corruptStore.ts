import { closeSync, openSync, statSync, writeFileSync, writeSync } from "node:fs";
import { Database } from "bun:sqlite";

/**
 * Writes `rows` events into the store at `path` (an agentd store: the events table exists), folds
 * the WAL into the file, then overwrites one whole page in the middle of the file with 0xFF: a
 * damaged table page that opening the store does not read, as a bad disk sector would leave it.
 */
export function damageMiddlePage(path: string, rows = 2000): void {
  const db = new Database(path, { strict: true });
  const insert = db.query("INSERT INTO events (ts, component, event, fields) VALUES (?, 'test', 'test.fill', ?)");
  db.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run(Date.now(), JSON.stringify({ i, pad: "x".repeat(200) }));
  })();
  const pageSize = db.query<{ page_size: number }, []>("PRAGMA page_size").get()!.page_size;
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  const pages = Math.floor(statSync(path).size / pageSize);
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, Buffer.alloc(pageSize, 0xff), 0, pageSize, Math.floor(pages / 2) * pageSize);
  } finally {
    closeSync(fd);
  }
}

/** A file where the store should be that is not a database at all. */
export function writeGarbageStore(path: string): void {
  writeFileSync(path, "these bytes were never a SQLite database\n".repeat(200));
}
