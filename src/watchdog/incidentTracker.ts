import type { Database } from "bun:sqlite";
import type { Logger } from "../core/log/index.ts";
import type { CommandApprovals } from "./actions/commandApprovals.ts";
import { IncidentStateStore } from "./incidents/incidentStateStore.ts";
import { latestOutput, type IncidentStore } from "./incidents/incidentStore.ts";
import type { Signal } from "./checks/signal.ts";
import { TrackedIncident } from "./incidents/trackedIncident.ts";
import type { WatchdogConfig } from "../core/config/sections/watchdogConfig.ts";

export interface IncidentTrackerDeps {
  config: WatchdogConfig;
  db: Database;
  log: Logger;
  store: IncidentStore;
  approvals: CommandApprovals;
}

/**
 * The unresolved incidents the watchdog works on, one per component: signals close together
 * join the same episode, a quiet gap resolves it and starts a new one. Each one's working state is
 * saved as it changes, so the next supervisor carries on with the same episode.
 */
export class IncidentTracker {
  readonly #byFingerprint = new Map<string, TrackedIncident>();
  readonly #states: IncidentStateStore;
  /** The state last written for each incident: unchanged state is not written again. */
  readonly #written = new WeakMap<TrackedIncident, string>();

  constructor(private readonly deps: IncidentTrackerDeps) {
    this.#states = new IncidentStateStore(deps.db);
  }

  /** Takes over the incidents left unresolved by a previous run, so they can resolve or recur. */
  adoptUnresolved(): number {
    const open = this.deps.store.list({ state: "unresolved", limit: 1000 });
    for (const incident of open) {
      const tracked = TrackedIncident.adopt(incident, this.#states.load(incident.id));
      if (this.#byFingerprint.has(tracked.fingerprint)) continue;
      this.#byFingerprint.set(tracked.fingerprint, tracked);
      this.deps.approvals.adopt(tracked);
    }
    return open.length;
  }

  get(fingerprint: string): TrackedIncident | undefined {
    return this.#byFingerprint.get(fingerprint);
  }

  /** A snapshot, so incidents can resolve while the caller walks it. */
  all(): TrackedIncident[] {
    return [...this.#byFingerprint.values()];
  }

  /** Whether the watchdog still works on this incident (it may have resolved while an action ran). */
  isTracked(tracked: TrackedIncident): boolean {
    return this.#byFingerprint.get(tracked.fingerprint) === tracked;
  }

  /** Writes an incident's working state when it changed. */
  save(tracked: TrackedIncident): void {
    if (!this.isTracked(tracked)) return;
    const state = JSON.stringify(tracked.toState());
    if (this.#written.get(tracked) === state) return;
    this.#states.save(tracked.id, state, Date.now());
    this.#written.set(tracked, state);
  }

  /**
   * The incident a signal joins: its component's current episode, or a newly opened one. An
   * episode whose action is under way (`busy`) is not quiet, whatever the gap.
   */
  incidentFor(signal: Signal, busy: (tracked: TrackedIncident) => boolean): { tracked: TrackedIncident; created: boolean } {
    const { config, store, log } = this.deps;
    const existing = this.#byFingerprint.get(signal.component);
    const groupMs = config.group_window_s * 1000;
    if (existing && (signal.ts - existing.lastSignalAt <= groupMs || busy(existing))) return { tracked: existing, created: false };
    if (existing) this.resolve(existing, `quiet for over ${config.group_window_s}s; a new episode starts`, signal.ts);
    const title =
      signal.component === "worker" || signal.component === "supervisor" ? signal.title : `${signal.title} — ${signal.component}`;
    const incident = store.open({
      fingerprint: signal.component,
      pattern: signal.id,
      title,
      category: signal.category,
      severity: signal.severity,
      now: signal.ts,
      details: {
        component: signal.component,
        signal: signal.id,
        ...(signal.line ? { output: latestOutput(signal.line), output_at: signal.ts } : {}),
      },
    });
    store.prune(config.max_incidents);
    log.warn("watchdog.incident_opened", {
      incident_id: incident.id,
      title,
      incident_component: signal.component,
      signal: signal.id,
      severity: signal.severity,
    });
    const tracked = new TrackedIncident(incident.id, signal.component, title, signal.category, signal.severity, signal.ts);
    this.#byFingerprint.set(signal.component, tracked);
    return { tracked, created: true };
  }

  resolve(tracked: TrackedIncident, why: string, now: number): void {
    const { store, approvals, log } = this.deps;
    this.#byFingerprint.delete(tracked.fingerprint);
    this.#states.delete(tracked.id);
    approvals.drop(tracked, "the incident resolved before the command ran");
    store.addEvent(tracked.id, "note", why, {}, now);
    store.closeEpisode(tracked.id);
    log.info("watchdog.incident_resolved", { incident_id: tracked.id, title: tracked.title, why });
  }

  /** An operator resolved an incident by hand: the next signal opens a new episode. */
  forgetClosedByOperator(): void {
    if (this.#byFingerprint.size === 0) return;
    const ids = [...this.#byFingerprint.values()].map((t) => t.id);
    const resolved = new Set(
      this.deps.db
        .query<{ id: number }, number[]>(`SELECT id FROM incidents WHERE state = 'resolved' AND id IN (${ids.map(() => "?").join(", ")})`)
        .all(...ids)
        .map((r) => r.id),
    );
    if (resolved.size === 0) return;
    for (const [key, tracked] of this.#byFingerprint) {
      if (!resolved.has(tracked.id)) continue;
      this.#byFingerprint.delete(key);
      this.#states.delete(tracked.id);
      this.deps.approvals.drop(tracked, "the incident was resolved by hand before the command ran");
    }
  }
}
