import type { Database } from "bun:sqlite";
import { CheckDebouncer } from "./checkDebouncer.ts";
import type { CheckRow } from "./checkRow.ts";
import { runCheck, type CheckContext } from "./checkRunners.ts";
import { CheckStateStore } from "./checkStateStore.ts";
import { Redactor } from "../../core/redaction/index.ts";
import type { Signal } from "./signal.ts";
import type { CheckConfig, WatchdogConfig } from "../../core/config/sections/watchdogConfig.ts";

export type { CheckRow } from "./checkRow.ts";

const KV_KEY = "watchdog.checks";

interface Scheduled {
  check: CheckConfig;
  debouncer: CheckDebouncer;
  timer?: ReturnType<typeof setTimeout>;
  row: CheckRow;
}

/**
 * Runs each configured check on its own interval, debounced; a state change becomes a signal, and
 * each later run that still fails goes to `onStillFailing` (its incident keeps count, last seen and
 * output current without being decided again). With a store, each check's state is saved after
 * every run and taken back at start, so a restarted supervisor knows a check was failing and does
 * not report it again as new.
 */
export class CheckScheduler {
  readonly #checks: Scheduled[];
  readonly #saved: CheckStateStore | undefined;
  /** Each check's last run time, in seconds. */
  readonly #seconds: Record<string, number> = {};
  /** When each check last passed: what verifies an action taken on its incident. */
  readonly #passedAt = new Map<string, number>();
  readonly #redactor: Redactor;
  #running = false;

  constructor(
    checks: readonly CheckConfig[],
    flapping: WatchdogConfig["flapping"],
    private readonly context: CheckContext,
    private readonly onSignal: (signal: Signal) => void,
    private readonly db: Database | undefined,
    private readonly now: () => number = Date.now,
    private readonly onStillFailing: (signal: Signal) => void = () => undefined,
  ) {
    this.#checks = checks.map((check) => ({
      check,
      debouncer: new CheckDebouncer({
        failureThreshold: check.failure_threshold,
        successThreshold: check.success_threshold,
        flapChanges: flapping.changes,
        flapWindowMs: flapping.window_s * 1000,
      }),
      row: { name: check.name, kind: check.type, severity: check.severity, state: "unknown", last_change: null },
    }));
    this.#saved = db ? new CheckStateStore(db) : undefined;
    this.#redactor = new Redactor(context.secrets);
    this.#restore();
  }

  start(): void {
    this.#running = true;
    for (const scheduled of this.#checks) this.#schedule(scheduled, 0);
  }

  stop(): void {
    this.#running = false;
    for (const scheduled of this.#checks) clearTimeout(scheduled.timer);
  }

  failing(name: string): boolean {
    return this.#checks.find((s) => s.check.name === name)?.debouncer.state === "failing";
  }

  /** The check ran after `since`, passed, and its debounced state is ok again. */
  passedSince(name: string, since: number): boolean {
    const scheduled = this.#checks.find((s) => s.check.name === name);
    return scheduled?.debouncer.state === "ok" && (this.#passedAt.get(name) ?? -Infinity) > since;
  }

  /** How long each check's last run took, in seconds. */
  durations(): Record<string, number> {
    return { ...this.#seconds };
  }

  rows(): CheckRow[] {
    return this.#checks.map((s) => ({ ...s.row }));
  }

  #schedule(scheduled: Scheduled, delayMs: number): void {
    scheduled.timer = setTimeout(async () => {
      await this.runOnce(scheduled.check.name);
      if (this.#running) this.#schedule(scheduled, scheduled.check.interval_s * 1000);
    }, delayMs);
  }

  /** Runs one check now and applies its result (also used by tests). */
  async runOnce(name: string): Promise<void> {
    const scheduled = this.#checks.find((s) => s.check.name === name);
    if (!scheduled) return;
    const { check } = scheduled;
    const started = performance.now();
    const ran = await runCheck(check, this.context);
    this.#seconds[name] = Math.round(performance.now() - started) / 1000;
    // A check's output is shown on the page and stored: key-shaped text in it is redacted first.
    const outcome = { ...ran, detail: this.#redactor.redact(ran.detail) };
    const now = this.now();
    const result = scheduled.debouncer.observe(outcome.ok, now);
    if (outcome.ok) this.#passedAt.set(name, now);
    const state = result.state === "failing" ? "fail" : result.state === "ok" ? "pass" : "unknown";
    const stateChanged = state !== scheduled.row.state;
    const failingSince = state === "fail" ? (scheduled.row.failing_since ?? now) : null;
    scheduled.row = {
      name: check.name,
      kind: check.type,
      severity: check.severity,
      state,
      last_change: stateChanged ? now : scheduled.row.last_change,
      output: outcome.detail,
      flapping: result.flapping,
      failing_since: failingSince,
    };
    this.#saved?.save(check, { debouncer: scheduled.debouncer.snapshot(), row: scheduled.row }, now);
    if (stateChanged || result.startedFlapping) this.#persist();
    const base = {
      category: check.type === "disk" ? ("config_state" as const) : ("daemon" as const),
      component: `check:${check.name}`,
      ts: now,
      fields: { check: check.name },
    };
    if (result.state === "failing" && !outcome.ok) {
      const failing: Signal = {
        ...base,
        id: `check.${check.type}`,
        title: `Check ${check.name} failing`,
        severity: check.severity,
        line: outcome.detail,
      };
      if (result.changed) this.onSignal(failing);
      else this.onStillFailing(failing);
    }
    if (result.startedFlapping) {
      this.onSignal({ ...base, id: "check.flapping", title: `Check ${check.name} is flapping`, severity: "warning", line: outcome.detail });
    }
  }

  /** Takes back what the previous supervisor knew of each check, and forgets checks no longer configured. */
  #restore(): void {
    if (!this.#saved) return;
    this.#saved.keepOnly(this.#checks.map((s) => s.check.name));
    let restored = 0;
    for (const scheduled of this.#checks) {
      const saved = this.#saved.load(scheduled.check);
      if (!saved) continue;
      scheduled.debouncer.restore(saved.debouncer);
      scheduled.row = { ...saved.row, name: scheduled.check.name, kind: scheduled.check.type, severity: scheduled.check.severity };
      restored++;
    }
    if (restored > 0) this.#persist();
  }

  #persist(): void {
    if (!this.db) return;
    this.db.run(
      "INSERT INTO kv (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
      [KV_KEY, JSON.stringify(this.rows()), this.now()],
    );
  }
}

/** The check rows the supervisor last stored, for the worker's status page. */
export function readCheckRows(db: Database): CheckRow[] {
  const row = db.query<{ value: string }, [string]>("SELECT value FROM kv WHERE key = ?").get(KV_KEY);
  return row ? (JSON.parse(row.value) as CheckRow[]) : [];
}
