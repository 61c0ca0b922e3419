import type { Database } from "bun:sqlite";

export interface Migration {
  /** Unique, ordered. Ranges by owner: 1–99 base, 100–199 proxy, 200–299 agent, 300–399 watchdog, 400–499 hop. */
  version: number;
  name: string;
  sql: string;
}

/**
 * Applies each migration not yet recorded, in version order, each in its own immediate
 * transaction, so two processes starting at once apply it exactly once.
 */
export function applyMigrations(db: Database, migrations: readonly Migration[]): number[] {
  db.run("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  assertUniqueVersions(sorted);
  const applied: number[] = [];
  const isApplied = db.query<{ n: number }, [number]>("SELECT count(*) AS n FROM schema_migrations WHERE version = ?");
  for (const migration of sorted) {
    const run = db.transaction(() => {
      if ((isApplied.get(migration.version)?.n ?? 0) > 0) return false;
      db.run(migration.sql);
      db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [migration.version, migration.name, Date.now()]);
      return true;
    });
    if (run.immediate()) applied.push(migration.version);
  }
  return applied;
}

function assertUniqueVersions(sorted: readonly Migration[]): void {
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.version === sorted[i - 1]!.version) {
      throw new Error(
        `Cannot apply migrations: version ${sorted[i]!.version} is used by both "${sorted[i - 1]!.name}" and "${sorted[i]!.name}"`,
      );
    }
  }
}
