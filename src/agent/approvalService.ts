import { AgentdError } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import { assertDigest } from "./approvalDigest.ts";
import { requestDigest } from "./approvalView.ts";
import type { ApprovalDecision, ApprovalRecord, ApprovalStore, DecidedBy } from "./approvalStore.ts";
import type { SessionEvents } from "./sessionEvents.ts";
import type { SessionStore } from "./sessionStore.ts";
import type { TurnEngine } from "./turnEngine.ts";
import type { SessionChannels } from "./sessionChannels.ts";
import type { AgentTelemetry } from "./agentTelemetry.ts";

class ApprovalConflictError extends AgentdError {
  constructor(approval: ApprovalRecord) {
    super(
      "approval_already_decided",
      `Approval ${approval.id} was already decided (${approval.status}${approval.decided_by ? ` by ${approval.decided_by}` : ""})`,
      {
        details: { status: approval.status, decided_by: approval.decided_by },
      },
    );
  }
}

export interface DecisionResult {
  approval: ApprovalRecord;
  /** Other pending approvals of the session that an allow_session released. */
  released: string[];
  /** True when this decision was the last one the turn waited for, so it continues now. */
  resumed: boolean;
}

/** Takes decisions on pending approvals and continues the paused turn once nothing is left to decide. */
export class ApprovalService {
  constructor(
    private readonly deps: {
      approvals: ApprovalStore;
      sessions: SessionStore;
      events: SessionEvents;
      /** The turn engine, or what continues a paused turn of any session kind. */
      engine: Pick<TurnEngine, "isRunning" | "resume">;
      channels: SessionChannels;
      logger: Logger;
      telemetry: AgentTelemetry;
    },
  ) {}

  /**
   * `digest` is what the approver saw (approvalDigest): the page and `agentd approve` always send
   * it, and a decision naming another one is refused. A decision without one (an API client older
   * than digests) is still taken.
   */
  decide(id: string, decision: ApprovalDecision, decidedBy: DecidedBy, digest?: string): DecisionResult {
    const { approvals } = this.deps;
    const approval = approvals.get(id);
    // Checked and decided in the same tick: nothing can change the approval between the two.
    if (approval.status === "pending") assertDigest(approval.id, digest, requestDigest(approval));
    if (!approvals.decide(id, decision, decidedBy)) throw new ApprovalConflictError(approvals.get(id));
    this.#announce(approvals.get(id), decidedBy);
    const released: string[] = [];
    if (decision === "allow_session") {
      approvals.grant(approval.session_id, approval.scope, approval.id);
      for (const other of approvals.pending(approval.session_id)) {
        if (other.scope !== approval.scope || !approvals.decide(other.id, "allow_session", decidedBy)) continue;
        released.push(other.id);
        this.#announce(approvals.get(other.id), decidedBy, approval.id);
      }
    }
    const resumed = this.#resumeIfDecided(approval.session_id, approval.turn_id);
    return { approval: approvals.get(id), released, resumed };
  }

  #announce(approval: ApprovalRecord, decidedBy: DecidedBy, releasedBy?: string): void {
    const fields = {
      approval_id: approval.id,
      tool: approval.tool,
      scope: approval.scope,
      summary: approval.summary,
      decision: approval.status,
      decided_by: decidedBy,
      ...(releasedBy ? { released_by: releasedBy } : {}),
    };
    this.deps.events.append(approval.session_id, approval.turn_id, "approval.decided", fields);
    this.deps.channels.get(approval.session_id).sidecar?.write("approval.decided", fields);
    // A paused session keeps nothing open: the record is written out at once.
    if (!this.deps.engine.isRunning(approval.session_id)) this.deps.channels.release(approval.session_id);
    this.deps.logger.info("approval.decided", { session: approval.session_id, ...fields });
    this.deps.telemetry.approvalDecided(approval.id, approval.status, decidedBy, (approval.decided_at ?? Date.now()) - approval.created_at);
  }

  #resumeIfDecided(sessionId: string, turnId: string): boolean {
    if (this.deps.approvals.forTurn(turnId).some((a) => a.status === "pending")) return false;
    // The conditional claim makes sure one decision, and only one, continues the turn.
    if (!this.deps.sessions.claimPausedTurn(turnId)) return false;
    this.deps.sessions.setState(sessionId, "running");
    this.deps.engine.resume(sessionId, turnId);
    return true;
  }
}
