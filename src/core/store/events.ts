import type { Database } from "bun:sqlite";

export interface StoredEvent {
  component: string;
  event: string;
  level?: string;
  fields?: Record<string, unknown>;
}

/** Records an event worth keeping past the log file (restarts, crash loops, config reloads). */
export function recordEvent(db: Database, entry: StoredEvent): void {
  db.run("INSERT INTO events (ts, component, event, level, fields) VALUES (?, ?, ?, ?, ?)", [
    Date.now(),
    entry.component,
    entry.event,
    entry.level ?? "info",
    JSON.stringify(entry.fields ?? {}),
  ]);
}
