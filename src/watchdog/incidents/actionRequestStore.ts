import type { Database } from "bun:sqlite";
import { AgentdError } from "../../core/errors/index.ts";
import {
  ActionAlreadyDecidedError,
  NoActionRequestError,
  decisionStatus,
  refuseDecision,
  type ActionDecision,
  type ActionRequest,
  type ActionRequestStatus,
} from "./actionRequest.ts";
import type { IncidentStore } from "./incidentStore.ts";

/** A request waiting for a decision, with what the approver needs to know of its incident. */
export interface PendingActionRequest extends ActionRequest {
  incident_title: string;
  incident_severity: string;
}

export interface NewActionRequest {
  incidentId: number;
  command: string;
  tier: number;
  reason: string;
  now: number;
  expiresAt: number;
}

/**
 * Action requests in the shared store. The worker (API, page) and the CLI decide; the supervisor's
 * watchdog creates, claims, finishes, expires and cancels. Every transition is one conditional
 * UPDATE on the expected status, so two processes racing for it cannot both win, and the winner
 * writes the timeline event.
 */
export class ActionRequestStore {
  constructor(
    readonly db: Database,
    private readonly incidents: IncidentStore,
  ) {}

  create(input: NewActionRequest): ActionRequest {
    const row = this.db
      .query<{ id: number }, Record<string, string | number>>(
        `INSERT INTO watchdog_action_requests (incident_id, action, command, tier, reason, status, requested_at, expires_at)
         VALUES ($incident_id, 'run_command', $command, $tier, $reason, 'pending', $now, $expires_at) RETURNING id`,
      )
      .get({
        incident_id: input.incidentId,
        command: input.command,
        tier: input.tier,
        reason: input.reason,
        now: input.now,
        expires_at: input.expiresAt,
      })!;
    return this.get(row.id)!;
  }

  get(id: number): ActionRequest | undefined {
    return this.db.query<ActionRequest, [number]>("SELECT * FROM watchdog_action_requests WHERE id = ?").get(id) ?? undefined;
  }

  /** Every request still waiting for a decision, oldest first, with its incident's title and severity. */
  pending(now: number): PendingActionRequest[] {
    return this.db
      .query<PendingActionRequest, [number]>(
        `SELECT r.*, i.title AS incident_title, i.severity AS incident_severity
           FROM watchdog_action_requests r JOIN incidents i ON i.id = r.incident_id
          WHERE r.status = 'pending' AND r.expires_at > ? ORDER BY r.requested_at, r.id`,
      )
      .all(now);
  }

  /**
   * Decides one request by its own id (the merged approval queue names requests, not incidents);
   * only the incident's latest request takes a decision, as through the incident.
   */
  decideRequest(requestId: number, decision: ActionDecision, by: string, now: number): ActionRequest {
    const request = this.get(requestId);
    if (!request) throw new AgentdError("approval_not_found", `No watchdog command request with id ${requestId}`);
    if (this.latest(request.incident_id)?.id !== request.id) throw new ActionAlreadyDecidedError(request);
    return this.decide(request.incident_id, decision, by, now);
  }

  /** The incident's most recent request, decided or not. */
  latest(incidentId: number): ActionRequest | undefined {
    return (
      this.db
        .query<ActionRequest, [number]>("SELECT * FROM watchdog_action_requests WHERE incident_id = ? ORDER BY id DESC LIMIT 1")
        .get(incidentId) ?? undefined
    );
  }

  /** The incident's request still in play (pending, allowed or running), if any. */
  outstanding(incidentId: number): ActionRequest | undefined {
    return (
      this.db
        .query<ActionRequest, [number]>(
          "SELECT * FROM watchdog_action_requests WHERE incident_id = ? AND status IN ('pending', 'allowed', 'running') ORDER BY id DESC LIMIT 1",
        )
        .get(incidentId) ?? undefined
    );
  }

  /**
   * Allows or denies the incident's latest request, exactly once. Throws 409 `action_already_decided`
   * when someone decided first, `action_expired` past its deadline, `no_action_request` when none.
   */
  decide(incidentId: number, decision: ActionDecision, by: string, now: number): ActionRequest {
    this.incidents.get(incidentId);
    const request = this.latest(incidentId);
    if (!request) throw new NoActionRequestError(incidentId);
    const refusal = refuseDecision(request, now);
    if (refusal) {
      this.expire(request.id, now);
      throw refusal;
    }
    const to = decisionStatus(decision);
    const changed = this.db
      .query<unknown, Record<string, string | number>>(
        "UPDATE watchdog_action_requests SET status = $to, decided_at = $now, decided_by = $by WHERE id = $id AND status = 'pending' AND expires_at > $now",
      )
      .run({ to, now, by, id: request.id }).changes;
    if (changed === 0) {
      const current = this.get(request.id)!;
      throw refuseDecision(current, now) ?? new ActionAlreadyDecidedError(current);
    }
    const verb = to === "allowed" ? "allowed" : "denied";
    this.incidents.addEvent(
      incidentId,
      `action_${verb}`,
      `run_command ${request.command} ${verb} by ${by}`,
      { request_id: request.id, command: request.command, by },
      now,
    );
    // The request as this decision left it: the supervisor may claim an allowed one at once, and the
    // decider is answered with what they did, not with a later state of another process.
    return { ...request, status: to, decided_at: now, decided_by: by };
  }

  /** The watchdog takes an allowed request to run it; false when it is not (or no longer) allowed. */
  claim(id: number, _now: number): boolean {
    return this.#move(id, ["allowed"], "running", null);
  }

  finish(id: number, ok: boolean, outcome: string, now: number): boolean {
    return this.#move(id, ["running"], ok ? "done" : "failed", now, outcome);
  }

  /** A pending request past its deadline; writes the timeline event when this call expired it. */
  expire(id: number, now: number): boolean {
    const changed =
      this.db.run("UPDATE watchdog_action_requests SET status = 'expired' WHERE id = ? AND status = 'pending' AND expires_at <= ?", [
        id,
        now,
      ]).changes > 0;
    if (changed) {
      const request = this.get(id)!;
      this.incidents.addEvent(
        request.incident_id,
        "action_expired",
        `run_command ${request.command} expired without a decision`,
        { request_id: id, command: request.command },
        now,
      );
    }
    return changed;
  }

  /** The incident went away before the command ran: the request is void, whatever its decision. */
  cancel(id: number, why: string, now: number): boolean {
    const changed = this.#move(id, ["pending", "allowed"], "cancelled", now, why);
    if (changed) {
      const request = this.get(id)!;
      this.incidents.addEvent(
        request.incident_id,
        "action_cancelled",
        `run_command ${request.command} cancelled: ${why}`,
        { request_id: id, command: request.command },
        now,
      );
    }
    return changed;
  }

  #move(id: number, from: readonly ActionRequestStatus[], to: ActionRequestStatus, finishedAt: number | null, outcome?: string): boolean {
    const params: Record<string, string | number | null> = {
      id,
      to,
      finished_at: finishedAt,
      ...(outcome === undefined ? {} : { outcome }),
    };
    for (const [i, status] of from.entries()) params[`from${i}`] = status;
    const placeholders = from.map((_, i) => `$from${i}`).join(", ");
    const setOutcome = outcome === undefined ? "" : ", outcome = $outcome";
    return (
      this.db
        .query<unknown, Record<string, string | number | null>>(
          `UPDATE watchdog_action_requests SET status = $to, finished_at = $finished_at${setOutcome} WHERE id = $id AND status IN (${placeholders})`,
        )
        .run(params).changes > 0
    );
  }
}
