import type { Database } from "bun:sqlite";

export type AgentEventType =
  | "turn.start"
  | "text.delta"
  | "tool.start"
  | "tool.progress"
  | "tool.end"
  | "approval_required"
  | "approval.decided"
  | "turn.end"
  | "error";

export interface AgentEvent {
  seq: number;
  session_id: string;
  turn_id: string | null;
  type: AgentEventType;
  data: Record<string, unknown>;
  ts: number;
}

type Listener = (event: AgentEvent) => void;

/**
 * The numbered events of every session: stored first, then handed to live listeners, so a client
 * that reconnects with `after=N` misses nothing and sees nothing twice.
 */
export class SessionEvents {
  #next = new Map<string, number>();
  #listeners = new Map<string, Set<Listener>>();
  readonly #insert;

  constructor(
    private readonly db: Database,
    private readonly onListenerError: (sessionId: string, error: unknown) => void,
  ) {
    this.#insert = db.query("INSERT INTO agent_events (session_id, seq, turn_id, type, data, ts) VALUES (?, ?, ?, ?, ?, ?)");
  }

  append(sessionId: string, turnId: string | null, type: AgentEventType, data: Record<string, unknown>): AgentEvent {
    const seq = this.#nextSeq(sessionId);
    const event: AgentEvent = { seq, session_id: sessionId, turn_id: turnId, type, data, ts: Date.now() };
    this.#insert.run(sessionId, seq, turnId, type, JSON.stringify(data), event.ts);
    this.#next.set(sessionId, seq + 1);
    for (const listener of this.#listeners.get(sessionId) ?? []) {
      try {
        listener(event);
      } catch (error) {
        // One broken stream (a client gone mid-write) must not fail the turn or starve other clients.
        this.onListenerError(sessionId, error);
      }
    }
    return event;
  }

  /** The number of the newest stored event (0 when there is none). */
  lastSeq(sessionId: string): number {
    return this.#nextSeq(sessionId) - 1;
  }

  after(sessionId: string, after: number, limit = 10_000): AgentEvent[] {
    return this.db
      .query<Omit<AgentEvent, "data"> & { data: string }, [string, number, number]>(
        "SELECT * FROM agent_events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
      )
      .all(sessionId, after, limit)
      .map((row) => ({ ...row, data: JSON.parse(row.data) as Record<string, unknown> }));
  }

  /** Drops what is kept in memory for an idle session; the next append reads its number from the store. */
  forget(sessionId: string): void {
    if (!this.#listeners.has(sessionId)) this.#next.delete(sessionId);
  }

  subscribe(sessionId: string, listener: Listener): () => void {
    let set = this.#listeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.#listeners.set(sessionId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(sessionId);
    };
  }

  #nextSeq(sessionId: string): number {
    let next = this.#next.get(sessionId);
    if (next === undefined) {
      next =
        (this.db.query<{ n: number | null }, [string]>("SELECT max(seq) AS n FROM agent_events WHERE session_id = ?").get(sessionId)?.n ??
          0) + 1;
      this.#next.set(sessionId, next);
    }
    return next;
  }
}
