import type { ActionExecutor, ActionResult } from "./actions/actionExecutor.ts";
import type { ActionJobs } from "./actionJobs.ts";
import type { AlertSink } from "./actions/alertSink.ts";
import type { CommandApprovals } from "./actions/commandApprovals.ts";
import type { DecisionQueue } from "./decisionQueue.ts";
import type { IncidentStore } from "./incidents/incidentStore.ts";
import type { IncidentTracker } from "./incidentTracker.ts";
import type { IncidentVerifier } from "./incidentVerifier.ts";
import type { Redactor } from "../core/redaction/index.ts";
import type { Logger } from "../core/log/index.ts";
import type { Decision } from "./checks/signal.ts";
import type { IncidentScope } from "./decide/actionScope.ts";
import { alsoAlerts } from "./decide/alertPolicy.ts";
import type { TrackedIncident } from "./incidents/trackedIncident.ts";
import type { WatchdogTracing } from "./watchdogTracing.ts";

/** What a decision started (an action, a webhook), or nothing. */
export type Started = Promise<void> | undefined;

export function both(a: Started, b: Started): Started {
  return a && b ? Promise.all([a, b]).then(() => undefined) : (a ?? b);
}

export interface IncidentActionsDeps {
  store: IncidentStore;
  approvals: CommandApprovals;
  alerts: AlertSink;
  executor: ActionExecutor;
  redactor: Redactor;
  verifier: IncidentVerifier;
  tracker: IncidentTracker;
  jobs: ActionJobs;
  queue: DecisionQueue;
  tracing: WatchdogTracing;
  log: Logger;
  now: () => number;
  /** What an incident is about: decides which actions fit it. */
  scope: (tracked: TrackedIncident) => IncidentScope;
  /** Tier 2, tier 3 or an alert, after an action failed (the watchdog's own decision). */
  escalate: (tracked: TrackedIncident, fromTier: number, failedAction?: string) => Started;
}

/**
 * The watchdog's hands: a decision becomes an action run outside the decision queue (or a command
 * waiting for a person), its outcome is recorded back in the queue, verified or escalated.
 */
export class IncidentActions {
  constructor(private readonly deps: IncidentActionsDeps) {}

  /** Records a decision and starts its action (or the approval it needs), with the alert its severity calls for. */
  act(tracked: TrackedIncident, decision: Decision): Started {
    const now = this.deps.now();
    const { log } = this.deps;
    if (decision.action === "alert" && tracked.alerted && this.deps.store.get(tracked.id).state === "acknowledged") return undefined;
    this.deps.store.recordDecision(tracked.id, decision);
    this.deps.store.addEvent(
      tracked.id,
      "action",
      `tier ${decision.tier}: ${decision.action} — ${decision.reason}`,
      { tier: decision.tier, action: decision.action, ...(decision.confidence !== undefined ? { confidence: decision.confidence } : {}) },
      now,
    );
    log.warn("watchdog.action", {
      incident_id: tracked.id,
      tier: decision.tier,
      action: decision.action,
      reason: decision.reason,
      ...(decision.command ? { command: decision.command } : {}),
    });
    // A command waiting for approval pages a person itself.
    if (decision.action === "run_command" && this.deps.approvals.needsApproval(decision.command))
      return this.deps.approvals.request(tracked, { ...decision, command: decision.command });
    return both(
      this.#alsoAlert(tracked, decision),
      this.launch(
        tracked,
        decision.action,
        () => this.#execute(tracked, decision, false),
        (result) => this.#afterAction(tracked, decision, result),
      ),
    );
  }

  /** An error or critical incident reaches a person whatever tier 2 or 3 does about it (see alertPolicy). */
  #alsoAlert(tracked: TrackedIncident, decision: Decision): Started {
    if (!alsoAlerts(decision, tracked.severity, tracked.alerted)) return undefined;
    tracked.alerted = true;
    return this.deps.alerts.alert({
      incidentId: tracked.id,
      title: tracked.title,
      severity: tracked.severity,
      message: `tier ${decision.tier}: ${decision.action}${decision.command ? ` ${decision.command}` : ""} — ${decision.reason}`,
    });
  }

  /** Runs `work` outside the queue; its result is decided back in the queue, where signals and ticks wait their turn. */
  launch<T>(tracked: TrackedIncident, what: string, work: () => Promise<T>, outcome: (result: T) => Started): Promise<void> {
    return this.deps.jobs.launch(tracked.id, work, (result) =>
      this.deps.queue.push(
        `${what} outcome for incident ${tracked.id}`,
        () => {
          const started = outcome(result);
          this.deps.tracker.save(tracked);
          return started;
        },
        { bounded: false },
      ),
    );
  }

  /** Runs an action; what it printed is redacted before it reaches the incident, the log or the page. */
  async #execute(tracked: TrackedIncident, decision: Decision, approved: boolean): Promise<ActionResult> {
    const span = this.deps.tracing.actionStarted(tracked, decision);
    const result = await this.deps.executor.execute(decision.action, {
      incidentId: tracked.id,
      title: tracked.title,
      severity: tracked.severity,
      component: tracked.fingerprint,
      scope: this.deps.scope(tracked),
      signals: tracked.latestSignals(),
      reason: decision.reason,
      command: decision.command,
      approved,
    });
    this.deps.tracing.actionEnded(span, result.ok);
    return { ...result, detail: this.deps.redactor.redact(result.detail) };
  }

  /**
   * Records what an action did; a remedial action that ran is verified, one that failed escalates.
   * An incident resolved (by hand) while its action ran only gets the record.
   */
  #afterAction(tracked: TrackedIncident, decision: Decision, result: ActionResult): Started {
    const { log } = this.deps;
    const kind = result.skipped ? "action_skipped" : result.ok ? "action_done" : "action_failed";
    this.deps.store.addEvent(tracked.id, kind, result.detail, { action: decision.action }, this.deps.now());
    if (decision.action === "alert") {
      tracked.alerted = true;
      this.deps.tracing.concluded(tracked.id, decision.tier, decision.action, "none");
      return undefined;
    }
    tracked.tried.push(decision.action);
    if (!result.ok) {
      log.warn("watchdog.action_failed", { incident_id: tracked.id, action: decision.action, detail: result.detail });
      this.deps.verifier.conclude(tracked, decision.tier, decision.action, `the action failed: ${result.detail}`, decision.command);
      return this.deps.tracker.isTracked(tracked) ? this.deps.escalate(tracked, decision.tier, decision.action) : undefined;
    }
    if (decision.action === "ignore" || result.skipped) {
      const why = result.skipped ? result.detail : "ignoring changes nothing, so there is nothing to verify or learn";
      this.deps.verifier.unverified(tracked, decision.tier, decision.action, why);
      return undefined;
    }
    return this.deps.tracker.isTracked(tracked) ? this.deps.verifier.begin(tracked, decision) : undefined;
  }

  /** An allowed command runs in the watchdog's process (outside the queue), then is verified like any action. */
  pollApproval(tracked: TrackedIncident): Started {
    const poll = this.deps.approvals.poll(tracked);
    if (poll.kind === "closed") return poll.delivery;
    if (poll.kind !== "run") return undefined;
    const { request } = poll;
    const decision: Decision = {
      tier: request.tier as Decision["tier"],
      action: "run_command",
      reason: request.reason,
      command: request.command,
    };
    return this.launch(
      tracked,
      "run_command",
      () => this.#execute(tracked, decision, true),
      (result) => {
        this.deps.approvals.requests.finish(request.id, result.ok, result.detail, this.deps.now());
        return this.#afterAction(tracked, decision, result);
      },
    );
  }
}
