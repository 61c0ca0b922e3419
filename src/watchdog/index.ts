// The engine (Watchdog, WatchdogRuntime and its tiers) is not exported here: it runs in the supervisor, which
// imports its files, while the worker, which imports this index for stores, routes and tools, never loads it.
export { RestartPolicy } from "./actions/restartPolicy.ts";
export type { RestartDecision, RestartPolicyOptions } from "./actions/restartPolicy.ts";
export { IncidentStore, IncidentNotFoundError } from "./incidents/incidentStore.ts";
export type { Incident, IncidentState, IncidentListOptions, IncidentEvent, Verdict } from "./incidents/incidentStore.ts";
export { createWatchdogCapability } from "./watchdogCapability.ts";
export type { WatchdogCapability, WatchdogApprovals } from "./watchdogCapability.ts";
export type { HealthView } from "./healthView.ts";
export { watchdogConfigSchema } from "../core/config/sections/watchdogConfig.ts";
export type { WatchdogConfig, ActionName, CheckConfig, SignatureConfig, RuleConfig } from "../core/config/sections/watchdogConfig.ts";
export { watchdogMigrations } from "./watchdogMigrations.ts";
export { SilenceStore } from "./incidents/silenceStore.ts";
export type { Silence } from "./incidents/silenceStore.ts";
export { silenceCovering, silenceTargetsOf } from "./incidents/silenceTargets.ts";
export { readCheckRows } from "./checks/checkScheduler.ts";
export { watchdogMetricFamilies } from "./watchdogCounters.ts";
export type { WatchdogCounters } from "./watchdogCounters.ts";
export type { CheckRow } from "./checks/checkScheduler.ts";
export type { Signal } from "./checks/signal.ts";
export { ActionRequestStore } from "./incidents/actionRequestStore.ts";
export { actorLabel, MAX_PERSON_NAME, personNameProblem } from "./incidents/actorLabel.ts";
export type { NewActionRequest, PendingActionRequest } from "./incidents/actionRequestStore.ts";
export {
  ACTION_DECISIONS,
  ACTION_REQUEST_STATUSES,
  DECIDERS,
  ActionAlreadyDecidedError,
  NoActionRequestError,
  canTransition,
  describeRequestStatus,
  refuseDecision,
} from "./incidents/actionRequest.ts";
export type { ActionDecision, ActionRequest, ActionRequestStatus, Decider } from "./incidents/actionRequest.ts";
