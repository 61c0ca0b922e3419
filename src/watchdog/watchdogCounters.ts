import type { Database } from "bun:sqlite";
import { renderPrometheus } from "../core/metrics/index.ts";

/** The watchdog engine's counters (the supervisor's), stored in kv for the worker's /metrics. */
export interface WatchdogCounters {
  signals_total: number;
  /** Signals that joined an incident whose action was under way: counted there, not decided again. */
  signals_merged_total: number;
  /** Signals dropped because the decision queue was full. */
  queue_dropped_total: number;
  queue_depth: number;
  actions_in_flight: number;
}

const KV_KEY = "watchdog.counters";

export function writeWatchdogCounters(db: Database, counters: WatchdogCounters, now: number): void {
  db.run(
    "INSERT INTO kv (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
    [KV_KEY, JSON.stringify(counters), now],
  );
}

export function readWatchdogCounters(db: Database): WatchdogCounters | undefined {
  const row = db.query<{ value: string }, [string]>("SELECT value FROM kv WHERE key = ?").get(KV_KEY);
  return row ? (JSON.parse(row.value) as WatchdogCounters) : undefined;
}

/** The counters in Prometheus text, as the supervisor last stored them; empty before it has. */
export function watchdogMetricsText(db: Database): string {
  const counters = readWatchdogCounters(db);
  if (!counters) return "";
  return renderPrometheus([
    {
      name: "agentd_watchdog_signals_total",
      help: "Signals the watchdog received.",
      type: "counter",
      samples: [{ value: counters.signals_total }],
    },
    {
      name: "agentd_watchdog_signals_merged_total",
      help: "Signals merged into an incident whose action was under way.",
      type: "counter",
      samples: [{ value: counters.signals_merged_total }],
    },
    {
      name: "agentd_watchdog_queue_dropped_total",
      help: "Signals dropped because the watchdog's decision queue was full.",
      type: "counter",
      samples: [{ value: counters.queue_dropped_total }],
    },
    {
      name: "agentd_watchdog_queue_depth",
      help: "Decisions waiting in the watchdog's queue.",
      type: "gauge",
      samples: [{ value: counters.queue_depth }],
    },
    {
      name: "agentd_watchdog_actions_in_flight",
      help: "Watchdog actions (restarts, commands, model calls) under way.",
      type: "gauge",
      samples: [{ value: counters.actions_in_flight }],
    },
  ]);
}
