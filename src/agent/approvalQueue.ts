import { AgentdError } from "../core/errors/index.ts";
import type { ActionDecision, ActionRequest, PendingActionRequest, WatchdogApprovals } from "../watchdog/index.ts";
import type { ApprovalDecision, ApprovalRecord, DecidedBy } from "./approvalStore.ts";
import { approvalDigest, assertDigest } from "./approvalDigest.ts";
import { approvalView, type ApprovalView } from "./approvalView.ts";
import type { SessionRecord } from "./sessionStore.ts";

/** Who asked for a call: the agent's model in a session, an MCP client, or the watchdog. */
export type ApprovalKind = "agent" | "mcp" | "watchdog";

interface QueueFields {
  kind: ApprovalKind;
  /** Who asked, in words: "agent session", "MCP client <name>", "watchdog". */
  requested_by: string;
}

export type AgentQueuedApproval = ApprovalView & QueueFields & { kind: "agent" | "mcp" };

/** A watchdog `run_command` waiting for a person, in the shape of the agent's approvals. */
export interface WatchdogQueuedApproval extends QueueFields {
  kind: "watchdog";
  id: string;
  session_id: null;
  tool: "run_command";
  scope: "exec";
  summary: string;
  status: string;
  decided_by: string | null;
  decided_at: number | null;
  created_at: number;
  command: string;
  target: "local";
  /** Why: the incident's title. */
  task: string;
  incident_id: number;
  incident_severity?: string;
  reason: string;
  expires_at: number;
  /** What a decision is bound to (approvalDigest of the command, run locally). */
  digest: string;
}

/** One queue, every kind: what `/api/approvals`, `agentd approve` and the page list. */
export type QueuedApproval = AgentQueuedApproval | WatchdogQueuedApproval;

/** Watchdog requests are named `wd_<request id>` beside the agent's own approval ids. */
const WATCHDOG_PREFIX = "wd_";

export function watchdogApprovalId(requestId: number): string {
  return `${WATCHDOG_PREFIX}${requestId}`;
}

/** The request id in a `wd_<n>` approval id, or undefined for the agent's own ids. */
export function watchdogRequestId(id: string): number | undefined {
  if (!id.startsWith(WATCHDOG_PREFIX)) return undefined;
  const n = Number(id.slice(WATCHDOG_PREFIX.length));
  if (!Number.isSafeInteger(n) || n <= 0) throw new AgentdError("approval_not_found", `No approval with id ${id}`);
  return n;
}

export function agentQueued(record: ApprovalRecord, session: SessionRecord | undefined): AgentQueuedApproval {
  const mcp = session?.kind === "mcp";
  return {
    ...approvalView(record),
    kind: mcp ? "mcp" : "agent",
    requested_by: mcp ? `MCP client ${session?.client ?? "(unnamed)"}` : "agent session",
  };
}

export function watchdogQueued(request: ActionRequest | PendingActionRequest, incidentTitle?: string): WatchdogQueuedApproval {
  const severity = "incident_severity" in request ? request.incident_severity : undefined;
  return {
    kind: "watchdog",
    requested_by: "watchdog",
    id: watchdogApprovalId(request.id),
    session_id: null,
    tool: "run_command",
    scope: "exec",
    summary: `run_command ${request.command}`,
    status: request.status,
    decided_by: request.decided_by,
    decided_at: request.decided_at,
    created_at: request.requested_at,
    command: request.command,
    target: "local",
    task: ("incident_title" in request ? request.incident_title : incidentTitle) ?? `incident ${request.incident_id}`,
    incident_id: request.incident_id,
    ...(severity ? { incident_severity: severity } : {}),
    reason: request.reason,
    expires_at: request.expires_at,
    digest: approvalDigest({ command: request.command, target: "local" }),
  };
}

/** The agent's decision words for a watchdog request, which is only allowed or denied (once). */
export function actionDecisionOf(decision: ApprovalDecision): ActionDecision {
  return decision === "deny" ? "deny" : "allow";
}

/** What deciding a watchdog request through the agent's approval routes answers. */
export function decideWatchdog(
  approvals: WatchdogApprovals | undefined,
  requestId: number,
  decision: ApprovalDecision,
  decidedBy: DecidedBy,
  digest?: string,
): { approval: WatchdogQueuedApproval; request: ActionRequest; released: string[]; resumed: false } {
  const id = watchdogApprovalId(requestId);
  if (!approvals) throw new AgentdError("approval_not_found", `No approval with id ${id}`);
  // A request no longer pending is left to decide(), which says why (decided, expired, unknown).
  const pending = approvals.pending().find((request) => request.id === requestId);
  if (pending) assertDigest(id, digest, watchdogQueued(pending).digest);
  const request = approvals.decide(requestId, actionDecisionOf(decision), decidedBy);
  return { approval: watchdogQueued(request), request, released: [], resumed: false };
}
