import type { Database } from "bun:sqlite";
import { AgentdError } from "../core/errors/index.ts";
import { newId } from "./agentIds.ts";

export const approvalDecisions = ["allow_once", "allow_session", "deny"] as const;
export type ApprovalDecision = (typeof approvalDecisions)[number];
export type ApprovalStatus = "pending" | ApprovalDecision | "cancelled";
export const decidedByValues = ["api", "page", "cli"] as const;
export type DecidedBy = (typeof decidedByValues)[number];

export interface ApprovalRecord {
  id: string;
  session_id: string;
  turn_id: string;
  tool_call_id: string;
  tool: string;
  scope: string;
  /** What the user is asked about: `exec_command "sudo systemctl restart nginx"`. */
  summary: string;
  status: ApprovalStatus;
  /**
   * JSON of the ApprovalRequest, unredacted: what the approver is shown. Set while pending only
   * (cleared at the decision); never logged, never in events or the sidecar.
   */
  request: string | null;
  /** The host the call was shown to run on (kept after the decision): it runs there or not at all. */
  target: string | null;
  decided_by: string | null;
  decided_at: number | null;
  created_at: number;
}

class ApprovalNotFoundError extends AgentdError {
  constructor(id: string) {
    super("approval_not_found", `No approval with id ${id}`);
  }
}

/** A call that would ask while its session already has `max` calls waiting: it is neither run nor queued. */
export class TooManyPendingApprovalsError extends AgentdError {
  constructor(tool: string, pending: number, max: number) {
    super(
      "too_many_pending_approvals",
      `${pending} calls of this session already wait for a person's decision (at most ${max} may wait at once): ${tool} was not run and not queued. Wait until the pending calls are decided, then call it again if it is still needed.`,
      { details: { pending, max } },
    );
  }
}

/** Pending and decided approvals; deciding is a conditional UPDATE, so only one decision wins. */
export class ApprovalStore {
  /**
   * When each pending approval was asked for, by id: read once at start, then kept as approvals
   * are created and decided (this class is their only writer), so /metrics never queries the table.
   */
  readonly #pendingSince = new Map<string, number>();

  constructor(private readonly db: Database) {
    const pending = db.query<{ id: string; created_at: number }, []>("SELECT id, created_at FROM agent_approvals WHERE status = 'pending'");
    for (const row of pending.all()) this.#pendingSince.set(row.id, row.created_at);
  }

  /** When each pending approval was asked for (epoch ms), from memory. */
  pendingSince(): number[] {
    return [...this.#pendingSince.values()];
  }

  /**
   * A pending approval, unless its session already has `maxPending` of them: then
   * TooManyPendingApprovalsError. Counted and inserted in one statement, so calls asking side by
   * side (an MCP client's) cannot pass the limit together.
   */
  create(
    input: Pick<ApprovalRecord, "session_id" | "turn_id" | "tool_call_id" | "tool" | "scope" | "summary"> & {
      request?: string;
      target?: string;
    },
    maxPending: number,
  ): ApprovalRecord {
    const id = newId("apr");
    const createdAt = Date.now();
    const inserted = this.db
      .query(
        `INSERT INTO agent_approvals (id, session_id, turn_id, tool_call_id, tool, scope, summary, request, target, status, created_at)
         SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?
         WHERE (SELECT COUNT(*) FROM agent_approvals WHERE session_id = ? AND status = 'pending') < ?`,
      )
      .run(
        id,
        input.session_id,
        input.turn_id,
        input.tool_call_id,
        input.tool,
        input.scope,
        input.summary,
        input.request ?? null,
        input.target ?? null,
        createdAt,
        input.session_id,
        maxPending,
      );
    if (inserted.changes === 0) throw new TooManyPendingApprovalsError(input.tool, this.pending(input.session_id).length, maxPending);
    this.#pendingSince.set(id, createdAt);
    return this.get(id);
  }

  find(id: string): ApprovalRecord | undefined {
    return this.db.query<ApprovalRecord, [string]>("SELECT * FROM agent_approvals WHERE id = ?").get(id) ?? undefined;
  }

  get(id: string): ApprovalRecord {
    const found = this.find(id);
    if (!found) throw new ApprovalNotFoundError(id);
    return found;
  }

  /** Records the decision if the approval is still pending; false when someone decided first. */
  decide(id: string, status: ApprovalDecision | "cancelled", decidedBy: string): boolean {
    const decided =
      this.db
        .query("UPDATE agent_approvals SET status = ?, decided_by = ?, decided_at = ?, request = NULL WHERE id = ? AND status = 'pending'")
        .run(status, decidedBy, Date.now(), id).changes === 1;
    if (decided) this.#pendingSince.delete(id);
    return decided;
  }

  pending(sessionId?: string): ApprovalRecord[] {
    if (sessionId)
      return this.db
        .query<ApprovalRecord, [string]>(
          "SELECT * FROM agent_approvals WHERE session_id = ? AND status = 'pending' ORDER BY created_at, rowid",
        )
        .all(sessionId);
    return this.db.query<ApprovalRecord, []>("SELECT * FROM agent_approvals WHERE status = 'pending' ORDER BY created_at, rowid").all();
  }

  forTurn(turnId: string): ApprovalRecord[] {
    return this.db
      .query<ApprovalRecord, [string]>("SELECT * FROM agent_approvals WHERE turn_id = ? ORDER BY created_at, rowid")
      .all(turnId);
  }

  forSession(sessionId: string): ApprovalRecord[] {
    return this.db
      .query<ApprovalRecord, [string]>("SELECT * FROM agent_approvals WHERE session_id = ? ORDER BY created_at, rowid")
      .all(sessionId);
  }

  list(limit = 100): ApprovalRecord[] {
    return this.db.query<ApprovalRecord, [number]>("SELECT * FROM agent_approvals ORDER BY created_at DESC, rowid DESC LIMIT ?").all(limit);
  }

  grant(sessionId: string, scope: string, approvalId: string): void {
    this.db
      .query("INSERT INTO agent_grants (session_id, scope, approval_id, granted_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
      .run(sessionId, scope, approvalId, Date.now());
  }

  grants(sessionId: string): Set<string> {
    return new Set(
      this.db
        .query<{ scope: string }, [string]>("SELECT scope FROM agent_grants WHERE session_id = ?")
        .all(sessionId)
        .map((r) => r.scope),
    );
  }
}
