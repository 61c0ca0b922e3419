import type { Database } from "bun:sqlite";

/**
 * The names of files each agent session wrote (write_file, redirections, tee, cp): running one of
 * them asks in the sudo scope. Kept in the store, so a file written before a worker restart still
 * counts after it.
 */
export class WrittenFileStore {
  constructor(private readonly db: Database) {}

  names(sessionId: string): Set<string> {
    return new Set(
      this.db
        .query<{ name: string }, [string]>("SELECT name FROM agent_written_files WHERE session_id = ?")
        .all(sessionId)
        .map((r) => r.name),
    );
  }

  add(sessionId: string, name: string): void {
    this.db.query("INSERT INTO agent_written_files (session_id, name) VALUES (?, ?) ON CONFLICT DO NOTHING").run(sessionId, name);
  }
}
