import type { SessionSummary, QueuedApproval } from "../agent/index.ts";
import { redactText } from "../core/redaction/index.ts";
import type { HopInfo, RemoteOverview } from "../hop/index.ts";
import type { ProxyProviderStatus } from "../proxy/index.ts";
import type { PtySessionInfo } from "../pty/index.ts";
import type { ApprovalRow, HopRow, ProviderRow, PtySessionRow, SessionRow } from "./statusSnapshot.ts";

/** Maps each capability's own records onto the rows the status page shows. Pure. */
export function providerRow(status: ProxyProviderStatus): ProviderRow {
  const degraded = status.state === "ok" && status.error_rate >= 0.2;
  return {
    name: status.name,
    state: status.state === "open" ? "down" : degraded ? "degraded" : status.state,
    breaker: status.breaker.state,
    breaker_retry_at: status.breaker.retryAt ?? null,
    requests: status.requests,
    errors: status.errors,
    p50_ms: status.p50_ms,
    p95_ms: status.p95_ms,
    tool_calls: status.tool_calls,
  };
}

export function sessionRow(session: SessionSummary): SessionRow {
  return {
    id: session.id,
    target: session.target,
    model: session.model,
    state: session.state,
    started_at: session.created_at,
    last_activity: session.updated_at,
    // A title is the task's first words, and a task may quote a credential.
    ...(session.title ? { title: redactText(session.title) } : {}),
  };
}

export function approvalRow(approval: QueuedApproval): ApprovalRow {
  return {
    id: approval.id,
    kind: approval.kind,
    requested_by: approval.requested_by,
    session_id: approval.session_id,
    ...(approval.kind === "watchdog" ? { incident_id: approval.incident_id } : {}),
    tool: approval.tool,
    scope: approval.scope,
    summary: approval.summary,
    requested_at: approval.created_at,
    ...(approval.kind === "watchdog"
      ? { command: approval.command }
      : {
          ...(approval.command !== undefined ? { command: approval.command, command_spans: approval.command_spans } : {}),
          ...(approval.workdir !== undefined ? { workdir: approval.workdir } : {}),
        }),
    ...(approval.target !== undefined ? { target: approval.target } : {}),
    ...(approval.task !== undefined ? { task: approval.task } : {}),
    ...(approval.kind !== "watchdog" && approval.reasons?.length ? { reasons: approval.reasons } : {}),
    ...(approval.kind !== "watchdog" && approval.argv ? { argv: approval.argv } : {}),
    ...(approval.digest !== undefined ? { digest: approval.digest } : {}),
  };
}

export function ptySessionRow(session: PtySessionInfo): PtySessionRow {
  return {
    id: session.id,
    command: redactText(session.cmd),
    pid: session.pid,
    running: session.running,
    exit_code: session.exit_code,
    started_at: Date.parse(session.started),
    last_output_at: session.last_output_at === null ? null : Date.parse(session.last_output_at),
  };
}

export function hopRow(hop: HopInfo & Partial<RemoteOverview>): HopRow {
  const output = hop.fallback_reason ?? hop.last_error ?? undefined;
  return {
    name: hop.name,
    target: hop.destination,
    via: hop.via,
    state: hop.state,
    remote_version: hop.remote_version,
    last_change: hop.last_change,
    health: hop.health ?? null,
    incidents_open: hop.incidents_open ?? null,
    gate: hop.gate ?? null,
    ...(output ? { output } : {}),
  };
}
