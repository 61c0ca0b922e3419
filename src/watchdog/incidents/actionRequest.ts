import { AgentdError } from "../../core/errors/index.ts";

/**
 * A `run_command` the watchdog chose but may not run on its own: it waits for a person's decision.
 *
 *   pending ─allow→ allowed ─claim→ running ─finish→ done | failed
 *      ├─deny→ denied
 *      ├─expire→ expired        (no decision within the approval timeout)
 *      └─cancel→ cancelled      (the incident resolved first)
 *   allowed ─cancel→ cancelled
 *
 * A decision is taken once: only `pending` accepts one. Only `allowed` may be claimed to run, so
 * nothing runs without an allow (or the command's pre-approval, which never creates a request).
 */
export const ACTION_REQUEST_STATUSES = ["pending", "allowed", "denied", "expired", "cancelled", "running", "done", "failed"] as const;
export type ActionRequestStatus = (typeof ACTION_REQUEST_STATUSES)[number];

export const ACTION_DECISIONS = ["allow", "deny"] as const;
export type ActionDecision = (typeof ACTION_DECISIONS)[number];

/** Who decided: the API, the status page's buttons, or the CLI against the store. */
export const DECIDERS = ["api", "page", "cli"] as const;
export type Decider = (typeof DECIDERS)[number];

export interface ActionRequest {
  id: number;
  incident_id: number;
  action: "run_command";
  command: string;
  tier: number;
  reason: string;
  status: ActionRequestStatus;
  requested_at: number;
  expires_at: number;
  decided_at: number | null;
  decided_by: string | null;
  finished_at: number | null;
  outcome: string | null;
}

const TRANSITIONS: Record<ActionRequestStatus, readonly ActionRequestStatus[]> = {
  pending: ["allowed", "denied", "expired", "cancelled"],
  allowed: ["running", "cancelled"],
  running: ["done", "failed"],
  denied: [],
  expired: [],
  cancelled: [],
  done: [],
  failed: [],
};

export function canTransition(from: ActionRequestStatus, to: ActionRequestStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function decisionStatus(decision: ActionDecision): "allowed" | "denied" {
  return decision === "allow" ? "allowed" : "denied";
}

export class ActionAlreadyDecidedError extends AgentdError {
  constructor(request: ActionRequest) {
    super(
      "action_already_decided",
      `The request to run ${request.command} on incident ${request.incident_id} is no longer pending: ${describeRequestStatus(request)}`,
      {
        details: { request_id: request.id, status: request.status },
      },
    );
  }
}

export class ActionExpiredError extends AgentdError {
  constructor(request: ActionRequest) {
    super(
      "action_expired",
      `The request to run ${request.command} on incident ${request.incident_id} expired at ${new Date(request.expires_at).toISOString()} without a decision`,
      {
        details: { request_id: request.id, status: "expired" },
      },
    );
  }
}

export class NoActionRequestError extends AgentdError {
  constructor(incidentId: number) {
    super("no_action_request", `Incident ${incidentId} has no action waiting for a decision`);
  }
}

/**
 * Why a decision on `request` at `now` cannot be taken, or undefined when it can. Pure: the store's
 * conditional UPDATE is what makes the decision exactly-once; this explains a refusal.
 */
export function refuseDecision(request: ActionRequest, now: number): AgentdError | undefined {
  if (request.status === "expired" || (request.status === "pending" && now >= request.expires_at)) return new ActionExpiredError(request);
  if (request.status !== "pending") return new ActionAlreadyDecidedError(request);
  return undefined;
}

export function describeRequestStatus(request: ActionRequest): string {
  const at = (ms: number | null) => (ms === null ? "" : ` at ${new Date(ms).toISOString()}`);
  switch (request.status) {
    case "pending":
      return `waiting for a decision until ${new Date(request.expires_at).toISOString()}`;
    case "allowed":
      return `allowed by ${request.decided_by ?? "?"}${at(request.decided_at)}; the watchdog runs it on its next tick`;
    case "denied":
      return `denied by ${request.decided_by ?? "?"}${at(request.decided_at)}`;
    case "expired":
      return `expired${at(request.expires_at)} without a decision`;
    case "cancelled":
      return `cancelled${at(request.finished_at)}${request.outcome ? `: ${request.outcome}` : ""}`;
    case "running":
      return `allowed by ${request.decided_by ?? "?"}, running`;
    case "done":
    case "failed":
      return `allowed by ${request.decided_by ?? "?"}, ran${at(request.finished_at)}: ${request.outcome ?? request.status}`;
  }
}
