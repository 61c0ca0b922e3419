import type { Logger } from "../core/log/index.ts";
import type { AlertSink } from "./actions/alertSink.ts";
import type { IncidentStore } from "./incidents/incidentStore.ts";
import type { IncidentTracker } from "./incidentTracker.ts";
import type { PatternMemory } from "./decide/patternMemory.ts";
import type { Decision } from "./checks/signal.ts";
import type { TrackedIncident } from "./incidents/trackedIncident.ts";
import type { ActionName, WatchdogConfig } from "../core/config/sections/watchdogConfig.ts";
import type { WatchdogTracing } from "./watchdogTracing.ts";

export interface IncidentVerifierDeps {
  config: WatchdogConfig;
  log: Logger;
  store: IncidentStore;
  memory: PatternMemory;
  alerts: AlertSink;
  tracker: IncidentTracker;
  /** Whether the worker is up and its probes pass. */
  healthy: () => boolean;
  /** The debounced state of a configured check, for incidents about it. */
  checkFailing: (name: string) => boolean;
  /** Hands an incident whose action did not clear it to the next tier; the promise is whatever that started. */
  escalate: (tracked: TrackedIncident, fromTier: number, failedAction: ActionName) => Promise<void> | undefined;
  now: () => number;
  tracing: WatchdogTracing;
}

/**
 * Judges whether an action worked: its triggers must stay away and health must pass over the
 * verification window. The verdict is remembered for tier 2. An incident with no action under way
 * resolves itself once its signals stay clear long enough.
 */
export class IncidentVerifier {
  constructor(private readonly deps: IncidentVerifierDeps) {}

  /** Starts the verification window of a remedial action that ran. */
  begin(tracked: TrackedIncident, decision: Decision): void {
    const start = this.deps.now();
    tracked.verification = {
      tier: decision.tier,
      action: decision.action,
      startedAt: start,
      deadline: start + this.deps.config.verify_window_s * 1000,
      triggers: new Set(tracked.signals.keys()),
      ...(decision.command ? { command: decision.command } : {}),
    };
    this.deps.tracing.verifyStarted(tracked);
  }

  /**
   * Settles a due verification, or resolves an incident that has been clear for long enough. Decides
   * at once; the promise, when there is one, is the escalation's action or the resolution's webhook.
   */
  review(tracked: TrackedIncident, now: number): Promise<void> | undefined {
    const { config } = this.deps;
    const v = tracked.verification;
    if (v) {
      const settleMs = Math.min(1000, (v.deadline - v.startedAt) / 4);
      const recurred = tracked.triggerRecurred(settleMs);
      if (!recurred && now < v.deadline) return undefined;
      tracked.verification = undefined;
      const success = !recurred && this.#clear(tracked);
      this.conclude(tracked, v.tier, v.action, success ? "success" : "failed", v.command);
      return success ? undefined : this.deps.escalate(tracked, v.tier, v.action);
    }
    if (now - tracked.lastSignalAt >= config.resolve_after_s * 1000 && this.#clear(tracked)) {
      this.deps.tracker.resolve(tracked, `signals clear for ${config.resolve_after_s}s and health passes`, now);
      if (tracked.alerted)
        return this.deps.alerts.alert({
          incidentId: tracked.id,
          title: tracked.title,
          severity: tracked.severity,
          message: `resolved: ${tracked.title}`,
          kind: "resolved",
        });
    }
    return undefined;
  }

  /** Records an action's verdict on the incident and in the pattern memory tier 2 draws on. */
  conclude(tracked: TrackedIncident, tier: number, action: ActionName, verdict: "success" | "failed", command?: string): void {
    const { store, memory, log } = this.deps;
    const now = this.deps.now();
    store.setVerdict(tracked.id, verdict);
    memory.record(tracked.pattern, action, tier, verdict, tracked.id, now, command);
    store.addEvent(tracked.id, "verdict", `${action}: ${verdict}`, { action, tier, verdict }, now);
    log.info("watchdog.verdict", { incident_id: tracked.id, action, tier, verdict });
    this.deps.tracing.concluded(tracked.id, tier, action, verdict);
  }

  #clear(tracked: TrackedIncident): boolean {
    if (tracked.fingerprint.startsWith("check:")) return !this.deps.checkFailing(tracked.fingerprint.slice("check:".length));
    return this.deps.healthy();
  }
}
