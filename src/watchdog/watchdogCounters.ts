import type { Database } from "bun:sqlite";
import { GaugeFamily, type MetricFamily } from "../core/metrics/index.ts";
import { readCheckRows } from "./checks/checkScheduler.ts";
import { CheckStateStore } from "./checks/checkStateStore.ts";
import { SilenceStore } from "./incidents/silenceStore.ts";
import { silenceTargetsOf } from "./incidents/silenceTargets.ts";

/** The watchdog engine's counters (the supervisor's), pushed to the worker for its /metrics. */
export interface WatchdogCounters {
  signals_total: number;
  /** Signals that joined an incident whose action was under way: counted there, not decided again. */
  signals_merged_total: number;
  /** Signals dropped because the decision queue was full. */
  queue_dropped_total: number;
  queue_depth: number;
  actions_in_flight: number;
  /** Actions that ended, by `tier|action|verdict` (verdict `none` for an alert, which is not verified). */
  actions?: Record<string, number>;
  /** How long each configured check's last run took, in seconds. */
  check_seconds?: Record<string, number>;
  /** Alerts Alertmanager took, and posts it refused or never answered. */
  alertmanager_sent_total?: number;
  alertmanager_failed_total?: number;
}

const CHECK_STATES = ["pass", "fail", "unknown"] as const;

/**
 * The counters as the supervisor last pushed them (supervisorChannel.ts), and what the store holds
 * of checks, incidents and silences: state the supervisor records there for the page as well.
 */
export function watchdogMetricFamilies(db: Database, counters: WatchdogCounters | undefined, now = Date.now()): MetricFamily[] {
  return [...storeFamilies(db, now), ...counterFamilies(counters)];
}

/** Before the supervisor first pushes its counters they are all 0, not absent: `rate()` and alerts work from the first scrape. */
const NO_COUNTS: WatchdogCounters = {
  signals_total: 0,
  signals_merged_total: 0,
  queue_dropped_total: 0,
  queue_depth: 0,
  actions_in_flight: 0,
};

const one = (name: string, help: string, type: "counter" | "gauge", value: number): MetricFamily => ({
  name,
  help,
  type,
  samples: [{ value }],
});

function counterFamilies(counters: WatchdogCounters = NO_COUNTS): MetricFamily[] {
  const actions: MetricFamily = {
    name: "agentd_watchdog_actions_total",
    help: "Watchdog actions that ended, by tier, action and verdict.",
    type: "counter",
    samples: Object.entries(counters.actions ?? {}).map(([key, value]) => {
      const [tier, action, verdict] = key.split("|");
      return { labels: { tier: tier!, action: action!, verdict: verdict! }, value };
    }),
  };
  const durations: MetricFamily = {
    name: "agentd_watchdog_check_duration_seconds",
    help: "How long each check's last run took.",
    type: "gauge",
    samples: Object.entries(counters.check_seconds ?? {}).map(([check, value]) => ({ labels: { check }, value })),
  };
  return [
    one("agentd_watchdog_signals_total", "Signals the watchdog received.", "counter", counters.signals_total),
    one(
      "agentd_watchdog_signals_merged_total",
      "Signals merged into an incident whose action was under way.",
      "counter",
      counters.signals_merged_total,
    ),
    one(
      "agentd_watchdog_queue_dropped_total",
      "Signals dropped because the watchdog's decision queue was full.",
      "counter",
      counters.queue_dropped_total,
    ),
    one("agentd_watchdog_queue_depth", "Decisions waiting in the watchdog's queue.", "gauge", counters.queue_depth),
    one(
      "agentd_watchdog_actions_in_flight",
      "Watchdog actions (restarts, commands, model calls) under way.",
      "gauge",
      counters.actions_in_flight,
    ),
    actions,
    durations,
    one(
      "agentd_watchdog_alertmanager_alerts_sent_total",
      "Alerts Alertmanager accepted.",
      "counter",
      counters.alertmanager_sent_total ?? 0,
    ),
    one(
      "agentd_watchdog_alertmanager_posts_failed_total",
      "Posts to Alertmanager that failed (retried).",
      "counter",
      counters.alertmanager_failed_total ?? 0,
    ),
  ];
}

/** Read from the store at scrape time: cheap queries on indexed or small tables. */
function storeFamilies(db: Database, now: number): MetricFamily[] {
  const checks = new GaugeFamily("agentd_watchdog_check_state", "Each configured check: 1 for its current state.");
  const silenced = new GaugeFamily(
    "agentd_watchdog_check_silenced",
    "Each configured check: 1 while an agentd silence covers it (rules leave its failure alone).",
  );
  const lastRun = new GaugeFamily(
    "agentd_watchdog_check_last_run_timestamp_seconds",
    "When each configured check last ran, as a Unix time in seconds (absent until its first run).",
  );
  const active = hasTable(db, "watchdog_silences") ? new SilenceStore(db).active(now) : [];
  const lastRuns = hasTable(db, "watchdog_check_state") ? new CheckStateStore(db).lastRuns() : new Map<string, number>();
  for (const row of readCheckRows(db)) {
    const ranAt = lastRuns.get(row.name);
    if (ranAt !== undefined) lastRun.set({ check: row.name }, ranAt / 1000);
    // Rows stored before checks had a severity read as "error", the default.
    const severity = row.severity ?? "error";
    for (const state of CHECK_STATES) checks.set({ check: row.name, kind: row.kind, severity, state }, row.state === state ? 1 : 0);
    const targets = new Set(silenceTargetsOf(`check.${row.kind}`, `check:${row.name}`));
    silenced.set({ check: row.name }, active.some((silence) => targets.has(silence.target)) ? 1 : 0);
  }
  const incidents = new GaugeFamily(
    "agentd_watchdog_incidents_open",
    "Unresolved incidents by severity, component and state (open or acknowledged).",
  );
  const rows = db
    .query<{ severity: string; component: string; state: string; n: number }, []>(
      "SELECT severity, COALESCE(json_extract(details, '$.component'), 'unknown') AS component, state, count(*) AS n FROM incidents WHERE state != 'resolved' GROUP BY 1, 2, 3",
    )
    .all();
  for (const row of rows) incidents.set({ severity: row.severity, component: row.component, state: row.state }, row.n);
  const silences = new GaugeFamily("agentd_watchdog_silences_active", "Silences in force.");
  if (hasTable(db, "watchdog_silences"))
    silences.set({}, db.query<{ n: number }, [number]>("SELECT count(*) AS n FROM watchdog_silences WHERE until > ?").get(now)!.n);
  return [checks.family(), silenced.family(), lastRun.family(), incidents.family(), silences.family()];
}

function hasTable(db: Database, name: string): boolean {
  return db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?").get(name)!.n > 0;
}
