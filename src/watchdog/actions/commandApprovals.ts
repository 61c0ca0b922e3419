import type { Logger } from "../../core/log/index.ts";
import type { ActionRequest } from "../incidents/actionRequest.ts";
import { ActionRequestStore } from "../incidents/actionRequestStore.ts";
import type { AlertSink } from "./alertSink.ts";
import type { IncidentStore } from "../incidents/incidentStore.ts";
import type { Decision } from "../checks/signal.ts";
import type { TrackedIncident } from "../incidents/trackedIncident.ts";
import type { WatchdogConfig } from "../../core/config/sections/watchdogConfig.ts";

/** What the watchdog does with an incident's approval on a tick; `delivery` is an alert's webhook under way. */
export type ApprovalPoll = { kind: "wait" } | { kind: "closed"; delivery?: Promise<void> } | { kind: "run"; request: ActionRequest };

/**
 * The watchdog's side of `run_command` approvals: a command that is not pre-approved becomes a
 * pending request on the incident (with a timeline event, a `watchdog.approval_required` line and
 * an alert) and runs only after someone allows it, in this process, on a later tick.
 */
export class CommandApprovals {
  readonly requests: ActionRequestStore;

  constructor(
    private readonly store: IncidentStore,
    private readonly alerts: AlertSink,
    private readonly log: Logger,
    private readonly config: WatchdogConfig,
    private readonly now: () => number,
  ) {
    this.requests = new ActionRequestStore(store.db, store);
  }

  /** A configured command that is not pre-approved; an unknown one fails in the executor instead. */
  needsApproval(command: string | undefined): command is string {
    const configured = command ? this.config.commands[command] : undefined;
    return configured !== undefined && !configured.pre_approved;
  }

  /** Records the request and alerts; the promise is the alert's webhook delivery. */
  request(tracked: TrackedIncident, decision: Decision & { command: string }): Promise<void> {
    const now = this.now();
    const expiresAt = now + this.config.approval_timeout_s * 1000;
    const request = this.requests.create({
      incidentId: tracked.id,
      command: decision.command,
      tier: decision.tier,
      reason: decision.reason,
      now,
      expiresAt,
    });
    tracked.approval = { requestId: request.id, tier: decision.tier, command: decision.command, reason: decision.reason };
    const until = new Date(expiresAt).toISOString();
    this.store.addEvent(
      tracked.id,
      "action_requested",
      `run_command ${decision.command} waits for a decision until ${until}`,
      { action: "run_command", command: decision.command, request_id: request.id, requested_at: now, expires_at: expiresAt },
      now,
    );
    this.log.warn("watchdog.approval_required", {
      incident_id: tracked.id,
      request_id: request.id,
      command: decision.command,
      tier: decision.tier,
      expires_at: until,
    });
    tracked.alerted = true;
    return this.alerts.alert({
      incidentId: tracked.id,
      title: tracked.title,
      severity: tracked.severity,
      message: `run_command ${decision.command} needs approval (until ${until}): agentd incidents approve ${tracked.id} | deny ${tracked.id}, or the incident's page`,
    });
  }

  /** Where the incident's request stands: still waiting, settled without a run, or allowed and claimed to run now. */
  poll(tracked: TrackedIncident): ApprovalPoll {
    const approval = tracked.approval!;
    const now = this.now();
    let request = this.requests.get(approval.requestId);
    if (!request) {
      tracked.approval = undefined;
      return { kind: "closed" };
    }
    if (request.status === "pending" && now >= request.expires_at) {
      this.requests.expire(request.id, now);
      request = this.requests.get(request.id)!;
    }
    switch (request.status) {
      case "pending":
      case "running":
        return { kind: "wait" };
      case "allowed":
        if (!this.requests.claim(request.id, now)) return { kind: "wait" };
        tracked.approval = undefined;
        this.log.warn("watchdog.approved_command", {
          incident_id: tracked.id,
          request_id: request.id,
          command: request.command,
          decided_by: request.decided_by,
        });
        return { kind: "run", request };
      case "denied":
      case "expired": {
        tracked.approval = undefined;
        this.store.setVerdict(tracked.id, request.status);
        const why = request.status === "denied" ? `denied by ${request.decided_by ?? "?"}` : "expired without a decision";
        this.log.warn(`watchdog.approval_${request.status}`, {
          incident_id: tracked.id,
          request_id: request.id,
          command: request.command,
          decided_by: request.decided_by,
        });
        const delivery = this.alerts.alert({
          incidentId: tracked.id,
          title: tracked.title,
          severity: tracked.severity,
          message: `run_command ${request.command} ${why}; it did not run`,
        });
        return { kind: "closed", delivery };
      }
      default:
        tracked.approval = undefined;
        return { kind: "closed" };
    }
  }

  /** The incident resolved first: its request no longer stands, whatever was decided. */
  drop(tracked: TrackedIncident, why: string): void {
    const approval = tracked.approval;
    if (!approval) return;
    tracked.approval = undefined;
    if (this.requests.cancel(approval.requestId, why, this.now())) this.store.setVerdict(tracked.id, "cancelled");
  }

  /**
   * Picks up an adopted incident's request. One left `running` by a previous supervisor is not run
   * again: whether the command finished is unknown, so it is recorded as failed.
   */
  adopt(tracked: TrackedIncident): void {
    const request = this.requests.outstanding(tracked.id);
    if (!request) return;
    if (request.status === "running") {
      const now = this.now();
      this.requests.finish(request.id, false, "interrupted: the supervisor restarted while it ran", now);
      this.store.addEvent(
        tracked.id,
        "action_failed",
        `run_command ${request.command} was interrupted by a supervisor restart; not run again`,
        { action: "run_command", request_id: request.id },
        now,
      );
      this.store.setVerdict(tracked.id, "failed");
      return;
    }
    tracked.approval = { requestId: request.id, tier: request.tier as Decision["tier"], command: request.command, reason: request.reason };
  }
}
