import { randomUUID } from "node:crypto";
import type { Logger } from "../core/log/index.ts";
import { chooseEviction, type EvictionCandidate } from "./evictionPolicy.ts";
import { PtyError } from "./ptyErrors.ts";

/**
 * The open sessions by id and the slots opens have taken before their session exists. A slot is
 * taken synchronously, before any await, so concurrent opens can never overshoot the limit.
 */
export class PtySessionTable<S extends EvictionCandidate> {
  private readonly sessions = new Map<string, S>();
  /** Slots taken by opens that have not started their session yet (waiting for an evicted session to end). */
  private reservedSlots = 0;

  constructor(private readonly log: Logger) {}

  get size(): number {
    return this.sessions.size;
  }

  values(): S[] {
    return [...this.sessions.values()];
  }

  find(id: string): S | undefined {
    return this.sessions.get(id);
  }

  get(id: string): S {
    const session = this.sessions.get(id);
    if (!session) {
      throw new PtyError("pty_session_not_found", `No PTY session ${JSON.stringify(id)}; list_sessions shows the open ones`, {
        session_id: id,
      });
    }
    return session;
  }

  /** Whether `session` is still the one open under its id. */
  holds(session: S): boolean {
    return this.sessions.get(session.id) === session;
  }

  add(session: S): void {
    this.sessions.set(session.id, session);
  }

  remove(id: string): void {
    this.sessions.delete(id);
  }

  /** Empties the table and gives back what was in it. */
  takeAll(): S[] {
    const all = this.values();
    this.sessions.clear();
    return all;
  }

  /** An id no open session has. */
  newId(): string {
    for (;;) {
      const id = randomUUID().slice(0, 8);
      if (!this.sessions.has(id)) return id;
    }
  }

  /**
   * Takes a slot for a new session: a free one, or the least recently used session's (never one of
   * the most recent), which leaves the table and which the caller then ends before starting its own.
   * Every slot taken is given back with releaseSlot once the open has its session, or has failed.
   */
  reserveSlot(max: number): { victim?: S } {
    if (this.sessions.size + this.reservedSlots < max) {
      this.reservedSlots++;
      return {};
    }
    const victimId = chooseEviction(this.values().map((s) => ({ id: s.id, lastUsedAt: s.lastUsedAt, running: s.running })));
    const victim = victimId === undefined ? undefined : this.sessions.get(victimId);
    if (!victim) {
      this.log.warn("pty.limit_reached", { max_sessions: max, evicted: null, starting: this.reservedSlots });
      if (this.reservedSlots > 0)
        throw new PtyError("pty_slots_busy", `All ${max} PTY session slots are taken by sessions still starting; try again shortly`, {
          max_sessions: max,
        });
      throw new PtyError("pty_limit_reached", `All ${max} PTY sessions are in recent use; close one with close_session first`);
    }
    this.sessions.delete(victim.id);
    this.reservedSlots++;
    return { victim };
  }

  releaseSlot(): void {
    this.reservedSlots--;
  }
}
