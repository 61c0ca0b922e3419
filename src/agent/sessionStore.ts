import type { Database } from "bun:sqlite";
import { AgentdError } from "../core/errors/index.ts";
import type { PolicyValue } from "../core/config/sections/approvalsConfig.ts";
import { newId } from "./agentIds.ts";

export type SessionState = "idle" | "running" | "awaiting_approval";
/** "agent": turns of the agent's model; "mcp": tool calls an MCP client makes directly. */
export type SessionKind = "agent" | "mcp";

export interface SessionRecord {
  id: string;
  created_at: number;
  updated_at: number;
  model: string;
  target: string;
  policy: Partial<Record<string, PolicyValue>>;
  title: string | null;
  state: SessionState;
  kind: SessionKind;
  /** Who drives an MCP session: the client's name and version from its initialize. */
  client: string | null;
}

export interface TurnRecord {
  id: string;
  session_id: string;
  status: "running" | "awaiting_approval" | "done";
  steps: number;
  end_reason: string | null;
  error: string | null;
  started_at: number;
  ended_at: number | null;
}

/** A chat message as the model sees it (OpenAI Chat Completions shape). */
export type ChatMessage = Record<string, unknown> & { role: string };

export interface StoredMessage {
  id: number;
  turn_id: string;
  role: string;
  body: ChatMessage;
  ts: number;
}

class SessionNotFoundError extends AgentdError {
  constructor(id: string) {
    super("session_not_found", `No agent session with id ${id}`);
  }
}

type SessionRow = Omit<SessionRecord, "policy"> & { policy: string };

/** Sessions, their turns and their messages in SQLite. */
export class SessionStore {
  constructor(private readonly db: Database) {}

  create(input: {
    model: string;
    target: string;
    policy: SessionRecord["policy"];
    kind?: SessionKind;
    client?: string;
    title?: string;
  }): SessionRecord {
    const now = Date.now();
    const id = newId("ses");
    this.db
      .query(
        "INSERT INTO agent_sessions (id, created_at, updated_at, model, target, policy, kind, client, title) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .run(
        id,
        now,
        now,
        input.model,
        input.target,
        JSON.stringify(input.policy),
        input.kind ?? "agent",
        input.client ?? null,
        input.title ?? null,
      );
    return this.get(id);
  }

  find(id: string): SessionRecord | undefined {
    const row = this.db.query<SessionRow, [string]>("SELECT * FROM agent_sessions WHERE id = ?").get(id);
    return row ? { ...row, policy: JSON.parse(row.policy) } : undefined;
  }

  get(id: string): SessionRecord {
    const session = this.find(id);
    if (!session) throw new SessionNotFoundError(id);
    return session;
  }

  list(limit = 100, offset = 0): SessionRecord[] {
    return this.db
      .query<SessionRow, [number, number]>("SELECT * FROM agent_sessions ORDER BY updated_at DESC LIMIT ? OFFSET ?")
      .all(limit, offset)
      .map((row) => ({ ...row, policy: JSON.parse(row.policy) }));
  }

  count(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM agent_sessions").get()?.n ?? 0;
  }

  /** Moves the session from one state to another; false when another request moved it first. */
  transition(id: string, from: SessionState, to: SessionState): boolean {
    return (
      this.db.query("UPDATE agent_sessions SET state = ?, updated_at = ? WHERE id = ? AND state = ?").run(to, Date.now(), id, from)
        .changes === 1
    );
  }

  setState(id: string, state: SessionState): void {
    this.db.query("UPDATE agent_sessions SET state = ?, updated_at = ? WHERE id = ?").run(state, Date.now(), id);
  }

  setTitleIfEmpty(id: string, title: string): void {
    this.db.query("UPDATE agent_sessions SET title = ? WHERE id = ? AND title IS NULL").run(title, id);
  }

  setTarget(id: string, target: string): void {
    this.db.query("UPDATE agent_sessions SET target = ?, updated_at = ? WHERE id = ?").run(target, Date.now(), id);
  }

  startTurn(sessionId: string): TurnRecord {
    const id = newId("turn");
    this.db
      .query("INSERT INTO agent_turns (id, session_id, status, started_at) VALUES (?, ?, 'running', ?)")
      .run(id, sessionId, Date.now());
    return this.getTurn(id);
  }

  getTurn(id: string): TurnRecord {
    const turn = this.db.query<TurnRecord, [string]>("SELECT * FROM agent_turns WHERE id = ?").get(id);
    if (!turn) throw new AgentdError("turn_not_found", `No turn with id ${id}`);
    return turn;
  }

  turns(sessionId: string): TurnRecord[] {
    return this.db.query<TurnRecord, [string]>("SELECT * FROM agent_turns WHERE session_id = ? ORDER BY started_at, rowid").all(sessionId);
  }

  /** The turn that is running or paused, if any. */
  openTurn(sessionId: string): TurnRecord | undefined {
    return (
      this.db
        .query<TurnRecord, [string]>(
          "SELECT * FROM agent_turns WHERE session_id = ? AND status != 'done' ORDER BY started_at DESC, rowid DESC LIMIT 1",
        )
        .get(sessionId) ?? undefined
    );
  }

  /** Turns left running by a worker that stopped without closing them. */
  runningTurns(): TurnRecord[] {
    return this.db.query<TurnRecord, []>("SELECT * FROM agent_turns WHERE status = 'running'").all();
  }

  setTurnStatus(id: string, status: "running" | "awaiting_approval", steps: number): void {
    this.db.query("UPDATE agent_turns SET status = ?, steps = ? WHERE id = ?").run(status, steps, id);
  }

  /** Claims a paused turn for resumption; only one caller gets true. */
  claimPausedTurn(id: string): boolean {
    return this.db.query("UPDATE agent_turns SET status = 'running' WHERE id = ? AND status = 'awaiting_approval'").run(id).changes === 1;
  }

  endTurn(id: string, reason: string, steps: number, error?: string): void {
    this.db
      .query("UPDATE agent_turns SET status = 'done', end_reason = ?, steps = ?, error = ?, ended_at = ? WHERE id = ?")
      .run(reason, steps, error ?? null, Date.now(), id);
  }

  addMessage(sessionId: string, turnId: string, message: ChatMessage): void {
    this.db
      .query("INSERT INTO agent_messages (session_id, turn_id, role, body, ts) VALUES (?, ?, ?, ?, ?)")
      .run(sessionId, turnId, message.role, JSON.stringify(message), Date.now());
  }

  /** One turn's messages (by the turn index: a long session's other messages are not read). */
  turnMessages(turnId: string): StoredMessage[] {
    return this.db
      .query<Omit<StoredMessage, "body"> & { body: string }, [string]>(
        "SELECT id, turn_id, role, body, ts FROM agent_messages WHERE turn_id = ? ORDER BY id",
      )
      .all(turnId)
      .map((row) => ({ ...row, body: JSON.parse(row.body) as ChatMessage }));
  }

  messages(sessionId: string): StoredMessage[] {
    return this.db
      .query<Omit<StoredMessage, "body"> & { body: string }, [string]>(
        "SELECT id, turn_id, role, body, ts FROM agent_messages WHERE session_id = ? ORDER BY id",
      )
      .all(sessionId)
      .map((row) => ({ ...row, body: JSON.parse(row.body) as ChatMessage }));
  }
}
