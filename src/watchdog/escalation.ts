import type { IncidentStore } from "./incidents/incidentStore.ts";
import type { HealthView } from "./healthView.ts";
import { buildIncidentReport } from "./incidentReport.ts";
import { learnKeyOf, type PatternMemory } from "./decide/patternMemory.ts";
import type { Redactor } from "../core/redaction/index.ts";
import { severityAtLeast, type Decision } from "./checks/signal.ts";
import type { AdviceOutcome, Tier3Advisor } from "./decide/tier3Advisor.ts";
import type { TrackedIncident } from "./incidents/trackedIncident.ts";
import type { WatchdogConfig } from "../core/config/sections/watchdogConfig.ts";
import { outOfScope, type IncidentScope } from "./decide/actionScope.ts";
import type { CheckConfig } from "../core/config/sections/watchdogConfig.ts";
import type { HostFacts } from "./hostFacts.ts";
import { describeStep } from "./decide/tier3Investigation.ts";

export interface EscalationDeps {
  config: WatchdogConfig;
  store: IncidentStore;
  memory: PatternMemory;
  advisor: Tier3Advisor;
  redactor: Redactor;
  health: () => HealthView;
  recentLines: () => readonly string[];
  /** What the incident is about, for the actions it may take. */
  scope: (tracked: TrackedIncident) => IncidentScope;
  /** The configured check an incident is about (or that verifies its signature). */
  checkOf: (tracked: TrackedIncident) => CheckConfig | undefined;
  hostFacts: () => HostFacts;
  now: () => number;
}

/** What to do for an incident no rule covers: act now, ask the model first (outside the queue), or nothing. */
export type EscalationPlan =
  | { kind: "act"; decision: Decision }
  | { kind: "ask"; call: () => Promise<AdviceOutcome> }
  /** Tier 3 is rate-limited: the incident waits its turn (an error or worse alerts meanwhile). */
  | { kind: "queue"; reason: string; alert?: Decision }
  | { kind: "none" };

/** Refusals that pass with time: the incident is asked later instead of never. */
const WAITS = new Set(["rate_limit_minute", "rate_limit_day"]);

/**
 * Tier 2 (actions verified for this component and pattern), then tier 3 (the model), then an alert
 * for what is serious enough.
 */
export class Escalation {
  constructor(private readonly deps: EscalationDeps) {}

  /** Tier 3 would refuse a call now: a waiting incident is not worth a report yet. */
  tier3Refuses(): boolean {
    return this.deps.advisor.refusesNow(this.deps.now());
  }

  plan(tracked: TrackedIncident, fromTier: number, failedAction?: string): EscalationPlan {
    const { config, memory, advisor } = this.deps;
    const key = learnKeyOf(tracked);
    const scope = this.deps.scope(tracked);
    if (fromTier < 2) {
      const remembered = memory.recommend(key, config.tier2.min_tries, config.tier2.min_success_rate, tracked.tried);
      if (remembered && !outOfScope(remembered.action, scope)) {
        const what = remembered.command ? `${remembered.action} ${remembered.command}` : remembered.action;
        const reason = `${what} was verified ${remembered.successes} of ${remembered.tries} times for ${key.component} (${key.pattern})`;
        return {
          kind: "act",
          decision: { tier: 2, action: remembered.action, reason, ...(remembered.command ? { command: remembered.command } : {}) },
        };
      }
    }
    if (fromTier < 3 && advisor.enabled) {
      const report = buildIncidentReport(
        tracked,
        this.deps.store.get(tracked.id),
        this.deps.health(),
        this.deps.recentLines(),
        memory.history(key),
        this.deps.redactor,
        config.tier3.max_log_lines,
        {
          ...(this.deps.checkOf(tracked) ? { check: this.deps.checkOf(tracked) } : {}),
          host: this.deps.hostFacts(),
          recent: this.deps.store.list({ limit: 6 }),
        },
      );
      const check = this.deps.checkOf(tracked);
      const plan = advisor.prepare(key, report, scope, this.deps.now(), check?.type === "command" ? check.argv : undefined);
      if (plan.kind === "call") return { kind: "ask", call: plan.call };
      const { outcome } = plan;
      if (!outcome.ok && outcome.refusal && WAITS.has(outcome.refusal)) {
        const alert = severityAtLeast(tracked.severity, "error") && !tracked.alerted ? this.fromAdvice(tracked, outcome) : undefined;
        return { kind: "queue", reason: outcome.reason, ...(alert ? { alert } : {}) };
      }
      return { kind: "act", decision: this.fromAdvice(tracked, outcome) };
    }
    if (failedAction || severityAtLeast(tracked.severity, "error")) {
      const reason = failedAction
        ? `${failedAction} did not clear the incident`
        : `no rule or verified fix for ${key.component} (${key.pattern})`;
      return { kind: "act", decision: { tier: Math.min(fromTier + 1, 3) as Decision["tier"], action: "alert", reason } };
    }
    return { kind: "none" };
  }

  /** The model's answer as a decision (a refusal or a failed call becomes an alert), its reasoning kept on the incident. */
  fromAdvice(tracked: TrackedIncident, advice: AdviceOutcome): Decision {
    const { store } = this.deps;
    this.#recordInvestigation(tracked, advice);
    if (advice.ok) {
      store.mergeDetails(tracked.id, {
        model_reason: advice.reason,
        model_confidence: advice.confidence,
        model_cached: advice.cached,
        ...(advice.hypothesis ? { model_hypothesis: advice.hypothesis } : {}),
        ...(advice.evidence ? { model_evidence: advice.evidence } : {}),
      });
      return {
        tier: 3,
        action: advice.action,
        reason: `model: ${advice.reason}`,
        confidence: advice.confidence,
        ...(advice.command ? { command: advice.command } : {}),
      };
    }
    store.mergeDetails(tracked.id, { tier3_refusal: advice.refusal ?? "error" });
    // The refused answer is kept verbatim (redacted), so a person sees what the model tried.
    const reason = this.deps.redactor.redact(advice.reason);
    store.addEvent(tracked.id, "model_refused", reason, { refusal: advice.refusal ?? "error" }, this.deps.now());
    return { tier: 3, action: "alert", reason };
  }

  /** The diagnostics the model ran and its diagnosis, in words on the incident's timeline (redacted). */
  #recordInvestigation(tracked: TrackedIncident, advice: AdviceOutcome): void {
    const { store, redactor } = this.deps;
    const now = this.deps.now();
    for (const step of advice.investigation ?? [])
      store.addEvent(tracked.id, "diagnostic", describeStep(step), { argv: step.argv, ran: step.ran, exit_code: step.exit_code }, now);
    if (!advice.ok || (!advice.hypothesis && !advice.evidence)) return;
    const what = advice.command ? `${advice.action} ${advice.command}` : advice.action;
    const words = [
      advice.evidence ? `evidence: ${advice.evidence}` : undefined,
      advice.hypothesis ? `hypothesis: ${advice.hypothesis}` : undefined,
      `proposed: ${what} (confidence ${advice.confidence})`,
    ].filter((part): part is string => part !== undefined);
    store.addEvent(tracked.id, "diagnosis", redactor.redact(words.join("; ")), { action: advice.action }, now);
  }
}
