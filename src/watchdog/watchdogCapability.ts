import { type WatchdogCounters, watchdogMetricFamilies } from "./watchdogCounters.ts";
import type { Database } from "bun:sqlite";
import type { Capability } from "../core/capability.ts";
import { readCheckRows, type CheckRow } from "./checks/checkScheduler.ts";
import type { ActionDecision, ActionRequest, Decider } from "./incidents/actionRequest.ts";
import { ActionRequestStore, type PendingActionRequest } from "./incidents/actionRequestStore.ts";
import { watchdogHealthChecks } from "./watchdogHealth.ts";
import { incidentRoutes } from "./incidents/incidentRoutes.ts";
import { IncidentStore } from "./incidents/incidentStore.ts";
import { learnedRoutes } from "./learnedRoutes.ts";
import { createIncidentTools } from "./incidents/incidentTools.ts";

export interface WatchdogCapability extends Capability {
  incidents: IncidentStore;
  /** The supervisor's configured checks, as it last recorded them. */
  checkRows(): CheckRow[];
  decideAction(incidentId: number, decision: ActionDecision, decidedBy: Decider): ActionRequest;
  /** The run_command requests waiting for a person, for the one approval queue. */
  approvals: WatchdogApprovals;
}

/** The watchdog's command requests as the merged approval queue reads and decides them. */
export interface WatchdogApprovals {
  pending(): PendingActionRequest[];
  /** Throws 404 approval_not_found, 409 when decided already or expired. */
  decide(requestId: number, decision: ActionDecision, decidedBy: Decider): ActionRequest;
}

/**
 * The watchdog's side in the worker (the supervisor runs the watchdog itself): /api/incidents,
 * the incident tools, and the incidents and checks the page shows.
 */
export function createWatchdogCapability(options: {
  db: Database;
  /** The supervisor's counters as it last pushed them over the worker's IPC channel. */
  counters: () => WatchdogCounters | undefined;
  configuredNames?: () => readonly string[];
}): WatchdogCapability {
  const incidents = new IncidentStore(options.db);
  const requests = new ActionRequestStore(options.db, incidents);
  return {
    name: "watchdog",
    routes: [
      {
        path: "/api/incidents",
        app: incidentRoutes(incidents, { checks: () => readCheckRows(options.db), configured: options.configuredNames }),
      },
      { path: "/api/watchdog/learned", app: learnedRoutes(options.db) },
    ],
    tools: createIncidentTools(incidents),
    // The supervisor's counters as pushed; checks, incidents and silences are the store's own state.
    metricFamilies: () => watchdogMetricFamilies(options.db, options.counters()),
    incidents,
    checkRows: () => readCheckRows(options.db),
    healthChecks: () => watchdogHealthChecks(readCheckRows(options.db), incidents),
    approvals: {
      pending: () => requests.pending(Date.now()),
      decide: (requestId, decision, decidedBy) => requests.decideRequest(requestId, decision, decidedBy, Date.now()),
    },
    decideAction: (incidentId, decision, decidedBy) => requests.decide(incidentId, decision, decidedBy, Date.now()),
    // The supervisor runs the checks and the alerting: it re-read the same file and replaced its
    // watchdog before passing the reload on, and the names a silence may take are read at each use.
    reload: (change) => change.report(["watchdog", "alerts"], []),
    // The store is the worker's; nothing else is held open.
    close: async () => undefined,
  };
}
