import type { Database } from "bun:sqlite";
import type { Logger } from "../core/log/index.ts";
import { ActionExecutor, type ActionResult, type WorkerControl } from "./actions/actionExecutor.ts";
import { AlertSink } from "./actions/alertSink.ts";
import { CommandApprovals } from "./actions/commandApprovals.ts";
import { BUILTIN_SIGNATURES } from "./checks/signatureCatalog.ts";
import { DEFAULT_RULES } from "./decide/defaultRules.ts";
import { buildIncidentReport } from "./incidentReport.ts";
import { IncidentStore } from "./incidents/incidentStore.ts";
import { IncidentTracker } from "./incidentTracker.ts";
import { IncidentVerifier } from "./incidentVerifier.ts";
import { PatternMemory } from "./decide/patternMemory.ts";
import { describePortHolder } from "./actions/portHolder.ts";
import type { ProxyAdmin } from "./actions/proxyAdmin.ts";
import { Redactor } from "../core/redaction/index.ts";
import { RuleEngine, toRule } from "./decide/ruleEngine.ts";
import { severityAtLeast, type Decision, type Signal } from "./checks/signal.ts";
import { SignatureMatcher } from "./checks/signatureMatcher.ts";
import { SilenceStore } from "./incidents/silenceStore.ts";
import { Tier3Advisor } from "./decide/tier3Advisor.ts";
import type { TrackedIncident } from "./incidents/trackedIncident.ts";
import type { WatchdogConfig } from "../core/config/sections/watchdogConfig.ts";
import type { HealthView } from "./healthView.ts";

export interface WatchdogDeps {
  config: WatchdogConfig;
  db: Database;
  log: Logger;
  worker: WorkerControl;
  proxy: ProxyAdmin;
  /** Whether the worker is up and its probes pass. */
  health: () => HealthView;
  /** The debounced state of a configured check, for incidents about it. */
  checkFailing?: (name: string) => boolean;
  /** Secrets agentd holds (provider keys, the model key): redacted wherever they would appear. */
  secrets?: Iterable<string | undefined>;
  now?: () => number;
}

const RECENT_LINES = 200;

/**
 * The watchdog's brain: signals in, incidents out. Each signal joins its component's incident;
 * tier 1 rules act on known signals, an incident no rule covers goes to tier 2 (remembered,
 * verified actions) then tier 3 (the model) or an alert. Every action is verified over a window
 * and the verdict is remembered. Work is serialized so decisions never race each other.
 */
export class Watchdog {
  readonly store: IncidentStore;
  readonly silences: SilenceStore;
  readonly memory: PatternMemory;
  readonly matcher: SignatureMatcher;
  readonly alerts: AlertSink;
  readonly approvals: CommandApprovals;
  readonly #rules: RuleEngine;
  readonly #executor: ActionExecutor;
  readonly #advisor: Tier3Advisor;
  readonly #redactor: Redactor;
  readonly #tracker: IncidentTracker;
  readonly #verifier: IncidentVerifier;
  readonly #recent: string[] = [];
  readonly #now: () => number;
  #queue: Promise<void> = Promise.resolve();

  constructor(private readonly deps: WatchdogDeps) {
    const { config, db, log } = deps;
    this.#now = deps.now ?? Date.now;
    this.store = new IncidentStore(db);
    this.silences = new SilenceStore(db);
    this.memory = new PatternMemory(db);
    this.matcher = new SignatureMatcher([...config.signatures, ...BUILTIN_SIGNATURES]);
    const rules = [...config.rules, ...(config.default_rules ? DEFAULT_RULES : [])].map(toRule);
    this.#rules = new RuleEngine(rules, config.rule_reset_s * 1000);
    this.alerts = new AlertSink(this.store, log, config.webhook, this.#now);
    this.#executor = new ActionExecutor(config, deps.worker, deps.proxy, this.alerts);
    this.approvals = new CommandApprovals(this.store, this.alerts, log, config, this.#now);
    this.#advisor = new Tier3Advisor(db, config.tier3, Object.keys(config.commands));
    this.#redactor = new Redactor([config.tier3.api_key, ...(deps.secrets ?? [])]);
    this.#tracker = new IncidentTracker({ config, db, log, store: this.store, approvals: this.approvals });
    this.#verifier = new IncidentVerifier({
      config,
      log,
      store: this.store,
      memory: this.memory,
      alerts: this.alerts,
      tracker: this.#tracker,
      healthy: () => deps.health().ok,
      checkFailing: (name) => deps.checkFailing?.(name) ?? false,
      escalate: (tracked, fromTier, failedAction) => this.#decideUnmatched(tracked, fromTier, failedAction),
      now: this.#now,
    });
  }

  /** Takes over the incidents left unresolved by a previous run, so they can resolve or recur. */
  adoptUnresolved(): number {
    return this.#tracker.adoptUnresolved();
  }

  /** A line from the worker's stdout or a tailed log file. */
  ingestLine(line: string): Promise<void> | undefined {
    this.#recent.push(line);
    if (this.#recent.length > RECENT_LINES) this.#recent.shift();
    const signal = this.matcher.match(line, this.#now());
    return signal ? this.report(signal) : undefined;
  }

  report(signal: Signal): Promise<void> {
    if (signal.line) signal.line = this.#redactor.redact(signal.line);
    if (signal.id === "port.in_use") describePortHolder(signal);
    return this.#serialize(() => this.#handle(signal));
  }

  /** Re-evaluates open incidents: verification windows, auto-resolve, operator changes. */
  tick(): Promise<void> {
    return this.#serialize(() => this.#tick());
  }

  /** Resolves once everything queued so far has been handled. */
  idle(): Promise<void> {
    return this.#serialize(async () => {});
  }

  tracked(fingerprint: string): TrackedIncident | undefined {
    return this.#tracker.get(fingerprint);
  }

  #serialize(work: () => Promise<void>): Promise<void> {
    const next = this.#queue.then(work).catch((error) => this.deps.log.error("watchdog.error", { error }));
    this.#queue = next;
    return next;
  }

  async #handle(signal: Signal): Promise<void> {
    const now = signal.ts;
    const { tracked, created } = this.#tracker.incidentFor(signal);
    const first = tracked.add(signal);
    if (!created) this.store.touch(tracked.id, { now, severity: tracked.severity, pattern: tracked.pattern, title: tracked.title });
    if (first)
      this.store.addEvent(
        tracked.id,
        "signal",
        signal.title,
        { signal: signal.id, ...signal.fields, ...(signal.line ? { line: signal.line.slice(0, 500) } : {}) },
        now,
      );
    const silence = this.silences.covering(this.#silenceTargets(signal), now);
    if (silence) {
      if (!tracked.silenceNoted)
        this.store.addEvent(
          tracked.id,
          "silenced",
          `silenced until ${new Date(silence.until).toISOString()}${silence.reason ? `: ${silence.reason}` : ""}`,
          { silence_id: silence.id },
          now,
        );
      tracked.silenceNoted = true;
      return;
    }
    if (tracked.verification || tracked.approval) return;
    const verdict = this.#rules.observe(signal.id, signal.component, now);
    if (verdict.kind === "fire") {
      const reason = verdict.alertOnly
        ? `rule ${verdict.rule.id} fired ${verdict.firing} times; past its last cooldown it only alerts (${signal.title})`
        : `rule ${verdict.rule.id}: ${signal.title}${verdict.rule.count > 1 ? ` ×${verdict.rule.count} within ${verdict.rule.windowMs / 1000}s` : ""}${signal.line && !signal.line.startsWith("{") ? ` — ${signal.line.slice(0, 300)}` : ""}`;
      await this.#act(tracked, { tier: 1, action: verdict.action, reason, ruleId: verdict.rule.id, command: verdict.rule.command });
      return;
    }
    if (verdict.kind !== "none" || tracked.unmatchedDecided) return;
    tracked.unmatchedDecided = true;
    await this.#decideUnmatched(tracked, 1);
  }

  #silenceTargets(signal: Signal): string[] {
    const targets = [signal.id, signal.component];
    const colon = signal.component.indexOf(":");
    if (colon > 0) targets.push(signal.component.slice(colon + 1));
    return targets;
  }

  /** Tier 2, then tier 3, then an alert for what is serious enough. */
  async #decideUnmatched(tracked: TrackedIncident, fromTier: number, failedAction?: string): Promise<void> {
    const { config } = this.deps;
    const pattern = tracked.pattern;
    if (fromTier < 2) {
      const remembered = this.memory.recommend(pattern, config.tier2.min_tries, config.tier2.min_success_rate, tracked.tried);
      if (remembered) {
        const reason = `${remembered.action} worked ${remembered.successes} of ${remembered.tries} times for the pattern ${pattern}`;
        return this.#act(tracked, {
          tier: 2,
          action: remembered.action,
          reason,
          ...(remembered.command ? { command: remembered.command } : {}),
        });
      }
    }
    if (fromTier < 3 && this.#advisor.enabled) {
      const report = buildIncidentReport(
        tracked,
        this.store.get(tracked.id),
        this.deps.health(),
        this.#recent,
        this.memory.history(pattern),
        this.#redactor,
        config.tier3.max_log_lines,
      );
      const advice = await this.#advisor.advise(`${tracked.fingerprint}|${pattern}`, report, this.#now());
      if (advice.ok) {
        this.store.mergeDetails(tracked.id, {
          model_reason: advice.reason,
          model_confidence: advice.confidence,
          model_cached: advice.cached,
        });
        return this.#act(tracked, {
          tier: 3,
          action: advice.action,
          reason: `model: ${advice.reason}`,
          confidence: advice.confidence,
          ...(advice.command ? { command: advice.command } : {}),
        });
      }
      this.store.mergeDetails(tracked.id, { tier3_refusal: advice.refusal ?? "error" });
      return this.#act(tracked, { tier: 3, action: "alert", reason: advice.reason });
    }
    if (failedAction || severityAtLeast(tracked.severity, "error")) {
      const reason = failedAction ? `${failedAction} did not clear the incident` : `no rule or remembered action for ${pattern}`;
      await this.#act(tracked, { tier: Math.min(fromTier + 1, 3) as Decision["tier"], action: "alert", reason });
    }
  }

  async #act(tracked: TrackedIncident, decision: Decision): Promise<void> {
    const now = this.#now();
    const { log } = this.deps;
    if (decision.action === "alert" && tracked.alerted && this.store.get(tracked.id).state === "acknowledged") return;
    this.store.recordDecision(tracked.id, decision);
    this.store.addEvent(
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
    if (decision.action === "run_command" && this.approvals.needsApproval(decision.command))
      return this.approvals.request(tracked, { ...decision, command: decision.command });
    const result = await this.#execute(tracked, decision, false);
    return this.#afterAction(tracked, decision, result);
  }

  /** Runs an action; what it printed is redacted before it reaches the incident, the log or the page. */
  async #execute(tracked: TrackedIncident, decision: Decision, approved: boolean): Promise<ActionResult> {
    const result = await this.#executor.execute(decision.action, {
      incidentId: tracked.id,
      title: tracked.title,
      severity: tracked.severity,
      component: tracked.fingerprint,
      signals: tracked.latestSignals(),
      reason: decision.reason,
      command: decision.command,
      approved,
    });
    return { ...result, detail: this.#redactor.redact(result.detail) };
  }

  /** Records what an action did; a remedial action that ran is verified, one that failed escalates. */
  async #afterAction(tracked: TrackedIncident, decision: Decision, result: ActionResult): Promise<void> {
    const { log } = this.deps;
    this.store.addEvent(tracked.id, result.ok ? "action_done" : "action_failed", result.detail, { action: decision.action }, this.#now());
    if (decision.action === "alert") {
      tracked.alerted = true;
      return;
    }
    tracked.tried.push(decision.action);
    if (!result.ok) {
      log.warn("watchdog.action_failed", { incident_id: tracked.id, action: decision.action, detail: result.detail });
      this.#verifier.conclude(tracked, decision.tier, decision.action, "failed", decision.command);
      return this.#decideUnmatched(tracked, decision.tier, decision.action);
    }
    this.#verifier.begin(tracked, decision);
  }

  /** An allowed command runs here, in the watchdog's process, then is verified like any action. */
  async #pollApproval(tracked: TrackedIncident): Promise<void> {
    const poll = await this.approvals.poll(tracked);
    if (poll.kind !== "run") return;
    const { request } = poll;
    const decision: Decision = {
      tier: request.tier as Decision["tier"],
      action: "run_command",
      reason: request.reason,
      command: request.command,
    };
    const result = await this.#execute(tracked, decision, true);
    this.approvals.requests.finish(request.id, result.ok, result.detail, this.#now());
    await this.#afterAction(tracked, decision, result);
  }

  async #tick(): Promise<void> {
    const now = this.#now();
    this.#tracker.forgetClosedByOperator();
    for (const tracked of this.#tracker.all()) {
      if (tracked.approval) await this.#pollApproval(tracked);
      await this.#verifier.review(tracked, now);
    }
  }
}
