// Over 300 lines: one class, the decision loop (intake, tiers, re-decisions); its hands are incidentActions.ts.
import { RecentLines } from "./recentLines.ts";
import type { ActionJobs } from "./actionJobs.ts";
import type { AlertSink } from "./actions/alertSink.ts";
import type { CommandApprovals } from "./actions/commandApprovals.ts";
import type { DecisionQueue } from "./decisionQueue.ts";
import type { IncidentStore } from "./incidents/incidentStore.ts";
import type { IncidentTracker } from "./incidentTracker.ts";
import type { IncidentVerifier } from "./incidentVerifier.ts";
import type { PatternMemory } from "./decide/patternMemory.ts";
import { describePortHolder } from "./actions/portHolder.ts";
import type { Redactor } from "../core/redaction/index.ts";
import type { RuleEngine } from "./decide/ruleEngine.ts";
import type { Signal } from "./checks/signal.ts";
import type { SignatureMatcher } from "./checks/signatureMatcher.ts";
import { unknownErrorSignal } from "./checks/unknownErrors.ts";
import type { SilenceStore } from "./incidents/silenceStore.ts";
import { silenceTargetsOf } from "./incidents/silenceTargets.ts";
import type { Escalation } from "./escalation.ts";
import { scopeOf, type IncidentScope } from "./decide/actionScope.ts";
import type { TrackedIncident } from "./incidents/trackedIncident.ts";
import type { WatchdogCounters } from "./watchdogCounters.ts";
import { WatchdogTracing } from "./watchdogTracing.ts";
import { isBusyError } from "../core/store/storeErrors.ts";
import { IncidentActions, type Started } from "./incidentActions.ts";
import { composeWatchdog, type WatchdogDeps } from "./watchdogParts.ts";

export type { HealthView } from "./healthView.ts";
export type { WatchdogDeps } from "./watchdogParts.ts";

const RECENT_LINES = 200;

/**
 * The watchdog's brain: signals in, incidents out. Each signal joins its component's incident;
 * tier 1 rules act on known signals, an incident no rule covers goes to tier 2 (remembered,
 * verified actions) then tier 3 (the model) or an alert. Every action is verified over a window
 * and the verdict is remembered.
 *
 * Decisions are made one at a time in a bounded queue and never wait: an action (a restart, a
 * command, a model call, a webhook) runs outside it, and its outcome is decided back in the queue.
 * So a 30 s model call does not hold up a worker crash; signals for an incident whose action is
 * under way join it (counted) without being decided again.
 */
export class Watchdog {
  readonly store: IncidentStore;
  readonly silences: SilenceStore;
  readonly memory: PatternMemory;
  readonly matcher: SignatureMatcher;
  readonly alerts: AlertSink;
  readonly approvals: CommandApprovals;
  readonly #rules: RuleEngine;
  readonly #escalation: Escalation;
  readonly #redactor: Redactor;
  readonly #tracker: IncidentTracker;
  readonly #verifier: IncidentVerifier;
  readonly #queue: DecisionQueue;
  readonly #jobs: ActionJobs;
  readonly #recent = new RecentLines(RECENT_LINES);
  readonly #now: () => number;
  readonly #counts = { signals: 0, merged: 0 };
  readonly #tracing: WatchdogTracing;
  readonly #actions: IncidentActions;
  readonly #deps: WatchdogDeps;
  /** Ids of configured signatures: their signals are about watched services, never agentd's worker. */
  readonly #configuredSignatures: ReadonlySet<string>;
  #nextTick: Promise<void> | undefined;

  constructor(deps: WatchdogDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#tracing = new WatchdogTracing(deps.tracer);
    const parts = composeWatchdog(deps, this.#now, this.#tracing, {
      recentLines: () => this.#recent.list(),
      scope: (tracked) => this.#scope(tracked),
      escalate: (tracked, fromTier, failedAction) => this.#decideUnmatched(tracked, fromTier, failedAction),
    });
    ({ store: this.store, silences: this.silences, memory: this.memory, matcher: this.matcher, alerts: this.alerts } = parts);
    this.approvals = parts.approvals;
    this.#rules = parts.rules;
    this.#escalation = parts.escalation;
    this.#redactor = parts.redactor;
    this.#tracker = parts.tracker;
    this.#queue = parts.queue;
    this.#jobs = parts.jobs;
    this.#verifier = parts.verifier;
    this.#configuredSignatures = parts.configuredSignatures;
    this.#actions = new IncidentActions({
      ...parts,
      tracing: this.#tracing,
      log: deps.log,
      now: this.#now,
      scope: (tracked) => this.#scope(tracked),
      escalate: (tracked, fromTier, failedAction) => this.#decideUnmatched(tracked, fromTier, failedAction),
    });
  }

  /** Takes over the incidents left unresolved by a previous run, so they can resolve or recur. */
  adoptUnresolved(): number {
    return this.#tracker.adoptUnresolved();
  }

  /**
   * Lines from the worker's stdout, one read's worth (whole lines, each ended by LF): as ingestLine
   * for each, with the lines no signature could match passed over in one pass (eachCandidate).
   * Settles once every signal they raised is decided; undefined when they raised none.
   */
  ingestBlock(block: string): Promise<void> | undefined {
    // One walk over the read finds its candidates and counts its lines; they are kept before any is matched.
    const candidates: string[] = [];
    this.#recent.pushBlock(
      block,
      this.matcher.eachCandidate(block, (line) => candidates.push(line)),
    );
    const reports: Promise<void>[] = [];
    for (const line of candidates)
      try {
        const signal = this.matcher.match(line, this.#now());
        if (signal) reports.push(this.report(signal));
      } catch (error) {
        // A signal that could not be recorded (the store unwritable) costs its own line, not the rest of the read.
        this.#deps.log.error("watchdog.ingest_failed", { error });
      }
    return reports.length === 0 ? undefined : Promise.all(reports).then(() => undefined);
  }

  /**
   * One line: from a tailed log file (`file`, its path), or a worker's line given alone (the
   * worker's stdout itself comes a read at a time, through ingestBlock). A file's line is about the
   * service that wrote it: a signature that names no component puts it under `log:<path>`, never
   * under agentd's worker.
   */
  ingestLine(line: string, file?: string): Promise<void> | undefined {
    this.#recent.push(line);
    // A watched file's error line no signature knows still opens an incident, so tier 3 sees novel failures.
    const signal =
      this.matcher.match(line, this.#now()) ??
      (file !== undefined ? unknownErrorSignal(this.#redactor.redact(line), file, this.#now()) : undefined);
    if (signal && file !== undefined && signal.component === "worker") signal.component = `log:${file}`;
    return signal ? this.report(signal) : undefined;
  }

  /** Settles once the signal is decided and what that started has ended (at once when it was dropped). */
  report(signal: Signal): Promise<void> {
    if (signal.line) signal.line = this.#redactor.redact(signal.line);
    if (signal.id === "port.in_use") describePortHolder(signal);
    this.#counts.signals++;
    const busy = this.#tracker.get(signal.component);
    if (busy && this.#jobs.busy(busy.id)) return this.#merge(busy, signal);
    // Only log lines can flood: probes, checks and worker exits come at their own bounded pace and
    // are never dropped, so a full queue cannot hide a worker crash.
    return this.#queue.push(`signal ${signal.id}`, () => this.#decideOrRestart(signal), { bounded: signal.line !== undefined });
  }

  /**
   * A worker that stopped answering inside a write transaction holds the store's lock: nothing can
   * be recorded, and only its end frees the lock. It is restarted then without a record (the log
   * says so) rather than left hung; what follows is recorded as usual.
   */
  #decideOrRestart(signal: Signal): Started {
    try {
      return this.#decide(signal);
    } catch (error) {
      if (signal.id !== "worker.unresponsive" || !isBusyError(error)) throw error;
      const { log, worker } = this.#deps;
      const pid = typeof signal.fields?.pid === "number" ? signal.fields.pid : undefined;
      log.error("watchdog.restart_unrecorded", { reason: "the store is locked, most likely by the hung worker", pid, error });
      return worker.restartWorker(`${signal.title}; the store was locked, so the incident could not be recorded`, pid).then(
        (detail) => log.warn("watchdog.restarted_unrecorded", { pid, detail }),
        (failure: unknown) => log.error("watchdog.restart_failed", { pid, error: failure }),
      );
    }
  }

  /**
   * A check that still fails at a later run: its incident's count, last seen and output move on and
   * nothing is decided again (its tiers acted at the first failure; Alertmanager repeats the page).
   * With no incident left to join, the failure is new and decided as one.
   */
  recur(signal: Signal): Promise<void> {
    return this.#queue.push(
      `recurrence ${signal.id}`,
      () => {
        if (signal.line) signal.line = this.#redactor.redact(signal.line);
        this.#counts.signals++;
        // An incident resolved by hand meanwhile is not added to: the failure opens a new one.
        this.#tracker.forgetClosedByOperator();
        const tracked = this.#tracker.get(signal.component);
        if (!tracked) return this.#decide(signal);
        this.#record(tracked, signal, false);
        this.#tracker.save(tracked);
        return undefined;
      },
      { bounded: false },
    );
  }

  /** Re-evaluates open incidents: verification windows, auto-resolve, operator changes. A tick already waiting is not queued twice. */
  tick(): Promise<void> {
    this.#nextTick ??= this.#queue.push(
      "tick",
      () => {
        this.#nextTick = undefined;
        return this.#tick();
      },
      { bounded: false },
    );
    return this.#nextTick;
  }

  /**
   * Resolves once everything queued so far has been decided and every action it started has ended.
   * Ends once no new work arrives (stop() stops the watchdog's sources first).
   */
  async idle(): Promise<void> {
    for (;;) {
      await this.#queue.push("idle", () => undefined, { bounded: false });
      const running = [...this.#jobs.all(), ...this.alerts.pending()];
      if (running.length === 0 && this.#queue.depth === 0) return;
      await Promise.all(running);
    }
  }

  counters(): WatchdogCounters {
    return {
      signals_total: this.#counts.signals,
      signals_merged_total: this.#counts.merged,
      queue_dropped_total: this.#queue.dropped,
      queue_depth: this.#queue.depth,
      actions_in_flight: this.#jobs.size,
      actions: { ...this.#tracing.actions },
    };
  }

  tracked(fingerprint: string): TrackedIncident | undefined {
    return this.#tracker.get(fingerprint);
  }

  /** A signal for an incident whose action is under way: counted on it, decided with the action's outcome. */
  #merge(tracked: TrackedIncident, signal: Signal): Promise<void> {
    this.#record(tracked, signal, false);
    this.#counts.merged++;
    this.#tracker.save(tracked);
    return this.#jobs.running(tracked.id) ?? Promise.resolve();
  }

  #record(tracked: TrackedIncident, signal: Signal, created: boolean): void {
    const now = signal.ts;
    const first = tracked.add(signal);
    if (!created)
      this.store.touch(tracked.id, {
        now,
        severity: tracked.severity,
        pattern: tracked.pattern,
        title: tracked.title,
        output: signal.line,
      });
    if (first)
      this.store.addEvent(
        tracked.id,
        "signal",
        signal.title,
        { signal: signal.id, ...signal.fields, ...(signal.line ? { line: signal.line.slice(0, 500) } : {}) },
        now,
      );
  }

  #decide(signal: Signal): Started {
    const existing = this.#tracker.get(signal.component);
    if (existing && this.#jobs.busy(existing.id)) return this.#merge(existing, signal);
    const { tracked, created } = this.#tracker.incidentFor(signal, (t) => this.#jobs.busy(t.id));
    this.#record(tracked, signal, created);
    const started = this.#decideFor(tracked, signal);
    this.#tracker.save(tracked);
    return started;
  }

  #decideFor(tracked: TrackedIncident, signal: Signal): Started {
    const now = signal.ts;
    const silence = this.silences.covering(silenceTargetsOf(signal.id, signal.component), now);
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
      return undefined;
    }
    if (tracked.verification || tracked.approval) return undefined;
    const verdict = this.#rules.observe(signal.id, signal.component, now);
    if (verdict.kind === "fire") {
      const reason = verdict.alertOnly
        ? `rule ${verdict.rule.id} fired ${verdict.firing} times; past its last cooldown it only alerts (${signal.title})`
        : `rule ${verdict.rule.id}: ${signal.title}${verdict.rule.count > 1 ? ` ×${verdict.rule.count} within ${verdict.rule.windowMs / 1000}s` : ""}${signal.line && !signal.line.startsWith("{") ? ` — ${signal.line.slice(0, 300)}` : ""}`;
      return this.#actions.act(tracked, {
        tier: 1,
        action: verdict.action,
        reason,
        ruleId: verdict.rule.id,
        command: verdict.rule.command,
      });
    }
    if (verdict.kind !== "none" || tracked.unmatchedDecided) return undefined;
    tracked.unmatchedDecided = true;
    return this.#decideUnmatched(tracked, 1);
  }

  /** Tier 2, tier 3 or an alert; tier 3's model call runs outside the queue. */
  #decideUnmatched(tracked: TrackedIncident, fromTier: number, failedAction?: string): Started {
    const plan = this.#escalation.plan(tracked, fromTier, failedAction);
    const waited = tracked.waitingTier3;
    tracked.waitingTier3 = plan.kind === "queue";
    if (plan.kind === "queue") {
      if (waited) return undefined;
      this.store.addEvent(tracked.id, "queued", `waiting for tier 3 (${plan.reason}); asked once the limit allows`, {}, this.#now());
      return plan.alert ? this.#actions.act(tracked, plan.alert) : undefined;
    }
    if (plan.kind === "act") return this.#actions.act(tracked, plan.decision);
    if (plan.kind === "none") return undefined;
    return this.#actions.launch(tracked, "advice", plan.call, (advice) =>
      this.#tracker.isTracked(tracked) ? this.#actions.act(tracked, this.#escalation.fromAdvice(tracked, advice)) : undefined,
    );
  }

  /** What an incident is about: decides which actions fit it. */
  #scope(tracked: TrackedIncident): IncidentScope {
    return scopeOf(tracked.fingerprint, [...tracked.signals.keys()], this.#configuredSignatures);
  }

  /**
   * Decides again what waited: an incident whose silence ended (lifted or expired) gets the tier
   * action and alert it was spared, and one that waited for a rate-limited tier 3 is asked once the
   * limit allows (oldest first: each tick's incidents are visited in the order they opened).
   */
  #redecide(tracked: TrackedIncident, now: number): Started {
    if (!this.#tracker.isTracked(tracked) || this.#jobs.busy(tracked.id) || tracked.verification || tracked.approval) return undefined;
    if (tracked.silenceNoted) {
      const latest = tracked.latestSignals().sort((a, b) => b.ts - a.ts)[0];
      if (!latest || this.#stillSilenced(tracked, now)) return undefined;
      tracked.silenceNoted = false;
      this.store.addEvent(tracked.id, "silence_ended", "silence ended while the incident is open: deciding it now", {}, now);
      return this.#decideFor(tracked, { ...latest, ts: now });
    }
    return tracked.waitingTier3 && !this.#escalation.tier3Refuses() ? this.#decideUnmatched(tracked, 2) : undefined;
  }

  /** A silence still covers one of the incident's signals. */
  #stillSilenced(tracked: TrackedIncident, now: number): boolean {
    return tracked
      .latestSignals()
      .some((signal) => this.silences.covering(silenceTargetsOf(signal.id, signal.component), now) !== undefined);
  }

  #tick(): Started {
    const now = this.#now();
    this.#tracker.forgetClosedByOperator();
    const started: Promise<void>[] = [];
    for (const tracked of this.#tracker.all()) {
      // An incident whose action is under way is reviewed once its outcome is decided.
      if (this.#jobs.busy(tracked.id)) continue;
      const polled = tracked.approval ? this.#actions.pollApproval(tracked) : undefined;
      const reviewed = this.#jobs.busy(tracked.id) ? undefined : this.#verifier.review(tracked, now);
      const redecided = this.#redecide(tracked, now);
      this.#tracker.save(tracked);
      for (const one of [polled, reviewed, redecided]) if (one !== undefined) started.push(one);
    }
    return started.length > 0 ? Promise.all(started).then(() => undefined) : undefined;
  }
}
