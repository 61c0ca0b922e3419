import type { Logger } from "../core/log/index.ts";
import type { AlertSink } from "./actions/alertSink.ts";
import type { IncidentStore } from "./incidents/incidentStore.ts";
import type { IncidentTracker } from "./incidentTracker.ts";
import { learnKeyOf, type LearnKey, type PatternMemory } from "./decide/patternMemory.ts";
import { severityAtLeast, type Decision } from "./checks/signal.ts";
import type { TrackedIncident } from "./incidents/trackedIncident.ts";
import type { ActionName, WatchdogConfig } from "../core/config/sections/watchdogConfig.ts";
import type { WatchdogTracing } from "./watchdogTracing.ts";
import {
  judge,
  verificationSource,
  type Judgement,
  type SignatureVerification,
  type VerificationSource,
} from "./decide/verificationJudge.ts";

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
  /** A configured check ran after `since` and passes (debounced). */
  checkPassedSince: (name: string, since: number) => boolean;
  /** Drops tier 3's saved answer for what an incident is about (its action failed verification). */
  forgetAnswer: (key: LearnKey) => void;
  /** Hands an incident whose action did not clear it to the next tier; the promise is whatever that started. */
  escalate: (tracked: TrackedIncident, fromTier: number, failedAction: ActionName) => Promise<void> | undefined;
  now: () => number;
  tracing: WatchdogTracing;
}

/**
 * Judges whether an action worked by what failed passing again: the failing check, the check a log
 * signature names in `verify_check`, or agentd's probes for its own worker and providers (see
 * verificationJudge). A proven verdict is remembered for tier 2 under the incident's component and
 * pattern; an action nothing can verify is recorded as unverified and learned from never. An
 * incident with no action under way resolves itself once its signals stay clear long enough.
 */
export class IncidentVerifier {
  readonly #signatures: ReadonlyMap<string, SignatureVerification>;

  constructor(private readonly deps: IncidentVerifierDeps) {
    this.#signatures = new Map(deps.config.signatures.map((s) => [s.id, s]));
  }

  /**
   * Starts the verification window of a remedial action that ran. An action nothing can verify is
   * concluded at once as unverified; the promise, when there is one, is the alert that says so.
   */
  begin(tracked: TrackedIncident, decision: Decision): Promise<void> | undefined {
    const source = this.#source(tracked, [...tracked.signals.keys()]);
    if (source.kind === "none") {
      this.unverified(tracked, decision.tier, decision.action, source.why, decision.command);
      return this.#alertUnverified(tracked, decision.action, source.why);
    }
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
    return undefined;
  }

  /**
   * Settles a verification once its evidence is in, or resolves an incident that has been clear for
   * long enough. Decides at once; the promise, when there is one, is the escalation's action or the
   * resolution's webhook.
   */
  review(tracked: TrackedIncident, now: number): Promise<void> | undefined {
    const { config } = this.deps;
    const v = tracked.verification;
    if (v) {
      const settleMs = Math.min(1000, (v.deadline - v.startedAt) / 4);
      const source = this.#source(tracked, [...v.triggers]);
      const judgement = judge(source, {
        checkPassedSince: source.kind === "check" && this.deps.checkPassedSince(source.check, v.startedAt),
        healthy: this.deps.healthy(),
        recurred: tracked.triggerRecurred(settleMs),
        due: now >= v.deadline,
      });
      if (!judgement) return undefined;
      tracked.verification = undefined;
      this.#record(tracked, v.tier, v.action, judgement, v.command);
      return judgement.verdict === "success" ? undefined : this.deps.escalate(tracked, v.tier, v.action);
    }
    if (now - tracked.lastSignalAt >= config.resolve_after_s * 1000 && this.#clear(tracked)) {
      // One transaction: whoever reads the incident resolved (the worker's API, the status page) reads its resolved alert too.
      return this.deps.store.db.transaction(() => {
        this.deps.tracker.resolve(tracked, `signals clear for ${config.resolve_after_s}s and health passes`, now);
        if (!tracked.alerted) return undefined;
        return this.deps.alerts.alert({
          incidentId: tracked.id,
          title: tracked.title,
          severity: tracked.severity,
          message: `resolved: ${tracked.title}`,
          kind: "resolved",
        });
      })();
    }
    return undefined;
  }

  /** An action nothing can verify (ignore, or a signature without verify_check): recorded, never learned. */
  unverified(tracked: TrackedIncident, tier: number, action: ActionName, why: string, command?: string): void {
    this.#record(tracked, tier, action, { verdict: "unverified", by: why }, command);
  }

  /** An action that could not run: failed, without a window to wait for. */
  conclude(tracked: TrackedIncident, tier: number, action: ActionName, why: string, command?: string): void {
    this.#record(tracked, tier, action, { verdict: "failed", by: why }, command);
  }

  /**
   * Records a verdict on the incident and, when proven, in the memory tier 2 draws on. A failed
   * verdict also drops tier 3's saved answer for the same thing, so the next occurrence asks again.
   */
  #record(tracked: TrackedIncident, tier: number, action: ActionName, judgement: Judgement, command?: string): void {
    const { store, memory, log } = this.deps;
    const now = this.deps.now();
    const { verdict, by } = judgement;
    const key = learnKeyOf(tracked);
    store.setVerdict(tracked.id, verdict);
    const learned = verdict !== "unverified" && memory.record(key, action, tier, verdict, tracked.id, now, command);
    if (verdict === "failed") this.deps.forgetAnswer(key);
    const what = command ? `${action} ${command}` : action;
    store.addEvent(tracked.id, "verdict", `${what}: ${verdict} — ${by}`, { action, tier, verdict, verified_by: by }, now);
    if (learned) {
      const record = memory
        .learned(key.component)
        .find((r) => r.pattern === key.pattern && r.action === action && r.command === (command ?? null));
      if (record)
        store.addEvent(
          tracked.id,
          "learned",
          `${what} for ${key.component} (${key.pattern}): ${record.successes} of ${record.tries} verified${verdict === "failed" ? "; demoted until it works again" : ""} (incidents ${record.incident_ids.map((id) => `#${id}`).join(", ")})`,
          { action, component: key.component, pattern: key.pattern, tries: record.tries, successes: record.successes },
          now,
        );
    }
    log.info("watchdog.verdict", { incident_id: tracked.id, action, tier, verdict, verified_by: by, learned });
    this.deps.tracing.concluded(tracked.id, tier, action, verdict);
  }

  #alertUnverified(tracked: TrackedIncident, action: ActionName, why: string): Promise<void> | undefined {
    if (tracked.alerted || !severityAtLeast(tracked.severity, "error")) return undefined;
    tracked.alerted = true;
    return this.deps.alerts.alert({
      incidentId: tracked.id,
      title: tracked.title,
      severity: tracked.severity,
      message: `${action} ran but cannot be verified (${why}); a person must check ${tracked.fingerprint}`,
    });
  }

  #source(tracked: TrackedIncident, triggerIds: readonly string[]): VerificationSource {
    return verificationSource(tracked.fingerprint, triggerIds, this.#signatures);
  }

  /** Clear enough to resolve: the incident's check does not fail, else agentd's probes pass. */
  #clear(tracked: TrackedIncident): boolean {
    const source = this.#source(tracked, [...tracked.signals.keys()]);
    if (source.kind === "check") return !this.deps.checkFailing(source.check);
    return this.deps.healthy();
  }
}
