import type { Incident } from "./incidentStore.ts";
import { patternOf } from "../decide/patternMemory.ts";
import { worseSeverity, type Signal } from "../checks/signal.ts";
import type { ActionName, Severity } from "../../core/config/sections/watchdogConfig.ts";

export interface Verification {
  tier: number;
  action: ActionName;
  startedAt: number;
  deadline: number;
  /** Signal ids that led to the action: they must stay away for a success. */
  triggers: Set<string>;
  /** For run_command: which command, so tier 2 remembers it. */
  command?: string;
}

/** A run_command waiting for a person's decision (see CommandApprovals). */
export interface PendingApproval {
  requestId: number;
  tier: 1 | 2 | 3;
  command: string;
  reason: string;
}

export interface SignalTally {
  signal: Signal;
  count: number;
  lastAt: number;
}

/** What a TrackedIncident keeps across supervisor restarts (its approval lives in the action requests). */
export interface TrackedState {
  title: string;
  severity: Severity;
  last_signal_at: number;
  signals: SignalTally[];
  statuses: number[];
  tried: ActionName[];
  unmatched_decided: boolean;
  alerted: boolean;
  silence_noted: boolean;
  waiting_tier3?: boolean;
  verification?: Omit<Verification, "triggers"> & { triggers: string[] };
}

/** The watchdog's working view of one unresolved incident. */
export class TrackedIncident {
  readonly signals = new Map<string, SignalTally>();
  /** HTTP statuses seen in the incident's signals: part of its pattern. */
  readonly statuses = new Set<number>();
  verification: Verification | undefined;
  approval: PendingApproval | undefined;
  readonly tried: ActionName[] = [];
  /** An incident no rule covers gets one tier 2/3 decision. */
  unmatchedDecided = false;
  alerted = false;
  silenceNoted = false;
  /** Tier 3 was rate-limited when this incident needed it: asked again once the limit allows. */
  waitingTier3 = false;

  constructor(
    readonly id: number,
    readonly fingerprint: string,
    public title: string,
    readonly category: string,
    public severity: Severity,
    public lastSignalAt: number,
    /** The pattern stored with an incident adopted from a previous run (its signals are not known). */
    private readonly storedPattern = "",
  ) {}

  /** An incident left unresolved by a previous supervisor: its saved working state when there is one. */
  static adopt(incident: Incident, saved?: TrackedState): TrackedIncident {
    const tracked = new TrackedIncident(
      incident.id,
      incident.fingerprint ?? `incident:${incident.id}`,
      incident.title,
      incident.category,
      incident.severity as Severity,
      incident.last_seen,
      incident.pattern ?? "",
    );
    tracked.alerted = incident.details.alerted_at !== undefined;
    if (saved) tracked.#restore(saved);
    return tracked;
  }

  toState(): TrackedState {
    const v = this.verification;
    return {
      title: this.title,
      severity: this.severity,
      last_signal_at: this.lastSignalAt,
      signals: [...this.signals.values()],
      statuses: [...this.statuses],
      tried: [...this.tried],
      unmatched_decided: this.unmatchedDecided,
      alerted: this.alerted,
      silence_noted: this.silenceNoted,
      waiting_tier3: this.waitingTier3,
      ...(v ? { verification: { ...v, triggers: [...v.triggers] } } : {}),
    };
  }

  #restore(saved: TrackedState): void {
    this.title = saved.title;
    this.severity = saved.severity;
    this.lastSignalAt = saved.last_signal_at;
    for (const tally of saved.signals) this.signals.set(tally.signal.id, tally);
    for (const status of saved.statuses) this.statuses.add(status);
    this.tried.push(...saved.tried);
    this.unmatchedDecided = saved.unmatched_decided;
    this.alerted = this.alerted || saved.alerted;
    this.silenceNoted = saved.silence_noted;
    this.waitingTier3 = saved.waiting_tier3 ?? false;
    if (saved.verification) this.verification = { ...saved.verification, triggers: new Set(saved.verification.triggers) };
  }

  /** Adds a signal; true when it is the first of its kind in this incident. */
  add(signal: Signal): boolean {
    const tally = this.signals.get(signal.id);
    if (typeof signal.fields.status === "number" && signal.fields.status > 0) this.statuses.add(signal.fields.status);
    this.lastSignalAt = Math.max(this.lastSignalAt, signal.ts);
    this.severity = worseSeverity(this.severity, signal.severity);
    if (tally) {
      tally.count++;
      tally.lastAt = signal.ts;
      tally.signal = signal;
      return false;
    }
    this.signals.set(signal.id, { signal, count: 1, lastAt: signal.ts });
    return true;
  }

  get pattern(): string {
    if (this.signals.size === 0) return this.storedPattern;
    return patternOf([
      ...[...this.signals.keys()].map((id) => ({ id, fields: {} })),
      ...[...this.statuses].map((status) => ({ id: `http:${status}`, fields: {} })),
    ]);
  }

  latestSignals(): Signal[] {
    return [...this.signals.values()].map((t) => t.signal);
  }

  /** A trigger seen again after the action (past a short settle time for requests already in flight). */
  triggerRecurred(settleMs: number): boolean {
    const v = this.verification;
    if (!v) return false;
    for (const id of v.triggers) {
      const tally = this.signals.get(id);
      if (tally && tally.lastAt > v.startedAt + settleMs) return true;
    }
    return false;
  }
}
