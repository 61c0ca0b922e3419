import type { Migration } from "../core/store/index.ts";

/**
 * Watchdog tables (versions 300–399): timelines, learned outcomes, silences, model usage and answers,
 * command approvals, and the working state that lets a restarted supervisor carry on where it stopped.
 */
export const watchdogMigrations: readonly Migration[] = [
  {
    version: 300,
    name: "watchdog",
    sql: `
      ALTER TABLE incidents ADD COLUMN fingerprint TEXT;
      ALTER TABLE incidents ADD COLUMN pattern TEXT;
      CREATE INDEX incidents_fingerprint ON incidents (fingerprint, state);
      CREATE TABLE incident_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        incident_id INTEGER NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
        ts INTEGER NOT NULL,
        kind TEXT NOT NULL,
        message TEXT NOT NULL,
        fields TEXT NOT NULL DEFAULT '{}'
      );
      CREATE INDEX incident_events_incident ON incident_events (incident_id, id);
      CREATE TABLE watchdog_outcomes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        pattern TEXT NOT NULL,
        action TEXT NOT NULL,
        tier INTEGER NOT NULL,
        verdict TEXT NOT NULL CHECK (verdict IN ('success', 'failed')),
        incident_id INTEGER,
        ts INTEGER NOT NULL
      );
      CREATE INDEX watchdog_outcomes_pattern ON watchdog_outcomes (pattern, action);
      CREATE TABLE watchdog_silences (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        target TEXT NOT NULL,
        until INTEGER NOT NULL,
        reason TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE watchdog_ai_usage (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts INTEGER NOT NULL,
        incident_id INTEGER,
        model TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        cost REAL NOT NULL DEFAULT 0,
        outcome TEXT NOT NULL
      );
      CREATE INDEX watchdog_ai_usage_ts ON watchdog_ai_usage (ts);
      CREATE TABLE watchdog_ai_cache (fingerprint TEXT PRIMARY KEY, answer TEXT NOT NULL, expires_at INTEGER NOT NULL);
    `,
  },
  {
    // Commands that wait for a person's decision; the partial unique index keeps one outstanding per incident.
    version: 301,
    name: "watchdog_action_requests",
    sql: `
      CREATE TABLE watchdog_action_requests (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        incident_id INTEGER NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
        action TEXT NOT NULL,
        command TEXT NOT NULL,
        tier INTEGER NOT NULL,
        reason TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'allowed', 'denied', 'expired', 'cancelled', 'running', 'done', 'failed')),
        requested_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        decided_at INTEGER,
        decided_by TEXT,
        finished_at INTEGER,
        outcome TEXT
      );
      CREATE INDEX watchdog_action_requests_incident ON watchdog_action_requests (incident_id, id);
      CREATE UNIQUE INDEX watchdog_action_requests_outstanding ON watchdog_action_requests (incident_id) WHERE status IN ('pending', 'allowed', 'running');
      ALTER TABLE watchdog_outcomes ADD COLUMN command TEXT;
    `,
  },
  {
    // A check's debounced state and an unresolved incident's working view outlive the supervisor, so a
    // restart neither resolves an incident whose check still fails nor opens a second one for it.
    version: 302,
    name: "watchdog_working_state",
    sql: `
      CREATE TABLE watchdog_check_state (
        name TEXT PRIMARY KEY,
        config TEXT NOT NULL,
        state TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE TABLE watchdog_incident_state (
        incident_id INTEGER PRIMARY KEY REFERENCES incidents (id) ON DELETE CASCADE,
        state TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    // Learned outcomes are about one component: rows from before carry none and are never recommended.
    version: 303,
    name: "watchdog_outcomes_component",
    sql: `
      ALTER TABLE watchdog_outcomes ADD COLUMN component TEXT;
      CREATE INDEX watchdog_outcomes_component ON watchdog_outcomes (component, pattern, action);
    `,
  },
];
