import type { Migration } from "../core/store/index.ts";

export const agentMigrations: readonly Migration[] = [
  {
    version: 200,
    name: "agent_sessions",
    sql: `
      CREATE TABLE agent_sessions (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        model TEXT NOT NULL,
        target TEXT NOT NULL DEFAULT 'local',
        policy TEXT NOT NULL DEFAULT '{}',
        title TEXT,
        state TEXT NOT NULL DEFAULT 'idle' CHECK (state IN ('idle', 'running', 'awaiting_approval'))
      );
      CREATE TABLE agent_turns (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        status TEXT NOT NULL CHECK (status IN ('running', 'awaiting_approval', 'done')),
        steps INTEGER NOT NULL DEFAULT 0,
        end_reason TEXT,
        error TEXT,
        started_at INTEGER NOT NULL,
        ended_at INTEGER
      );
      CREATE INDEX agent_turns_session ON agent_turns (session_id, started_at);
      CREATE TABLE agent_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        turn_id TEXT NOT NULL,
        role TEXT NOT NULL,
        body TEXT NOT NULL,
        ts INTEGER NOT NULL
      );
      CREATE INDEX agent_messages_session ON agent_messages (session_id, id);
      CREATE TABLE agent_events (
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        seq INTEGER NOT NULL,
        turn_id TEXT,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        ts INTEGER NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) WITHOUT ROWID;
      CREATE TABLE agent_tool_calls (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        turn_id TEXT NOT NULL,
        step INTEGER NOT NULL,
        ordinal INTEGER NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        scope TEXT,
        arguments TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('planned', 'awaiting_approval', 'running', 'finished')),
        outcome TEXT CHECK (outcome IN ('ok', 'error', 'denied', 'timeout', 'cancelled', 'interrupted')),
        approval_id TEXT,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        ended_at INTEGER,
        duration_ms REAL,
        output_bytes INTEGER,
        error_code TEXT,
        error_message TEXT
      );
      CREATE INDEX agent_tool_calls_turn ON agent_tool_calls (turn_id, step, ordinal);
      CREATE INDEX agent_tool_calls_session ON agent_tool_calls (session_id, created_at);
      CREATE TABLE agent_approvals (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        turn_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL REFERENCES agent_tool_calls (id),
        tool TEXT NOT NULL,
        scope TEXT NOT NULL,
        summary TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'allow_once', 'allow_session', 'deny', 'cancelled')),
        decided_by TEXT,
        decided_at INTEGER,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX agent_approvals_status ON agent_approvals (status, created_at);
      CREATE INDEX agent_approvals_session ON agent_approvals (session_id, status);
      CREATE TABLE agent_grants (
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        scope TEXT NOT NULL,
        approval_id TEXT NOT NULL,
        granted_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, scope)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 201,
    name: "agent_approval_request",
    // What the approver must see unredacted while an approval is pending (command, workdir, task).
    // It lives only in this row, in the 0700 data dir, and is cleared when the approval is decided.
    sql: "ALTER TABLE agent_approvals ADD COLUMN request TEXT;",
  },
  {
    version: 210,
    name: "agent_session_kind",
    // "mcp": a session whose calls come from an MCP client (named in client) instead of the agent's model.
    sql: `
      ALTER TABLE agent_sessions ADD COLUMN kind TEXT NOT NULL DEFAULT 'agent' CHECK (kind IN ('agent', 'mcp'));
      ALTER TABLE agent_sessions ADD COLUMN client TEXT;
      CREATE INDEX agent_tool_calls_call_id ON agent_tool_calls (call_id);
    `,
  },
  {
    version: 212,
    name: "agent_approval_target",
    // The host an approval was asked for: a hop switched between the decision and the run cannot move it.
    sql: "ALTER TABLE agent_approvals ADD COLUMN target TEXT;",
  },
  {
    version: 211,
    name: "agent_written_files",
    // The text check's memory of what each session wrote, so it survives a worker restart.
    sql: `
      CREATE TABLE agent_written_files (
        session_id TEXT NOT NULL REFERENCES agent_sessions (id),
        name TEXT NOT NULL,
        PRIMARY KEY (session_id, name)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 213,
    name: "agent_messages_turn",
    // A direct call reads its own turn's messages; without this it would scan its whole session per call.
    sql: "CREATE INDEX agent_messages_turn ON agent_messages (turn_id, id);",
  },
];
