export { RestartPolicy } from "./restartPolicy.ts";
export type { RestartDecision, RestartPolicyOptions } from "./restartPolicy.ts";
export { IncidentStore, IncidentNotFoundError } from "./incidentStore.ts";
export type { Incident, IncidentState, IncidentListOptions, IncidentEvent, Verdict } from "./incidentStore.ts";
export { incidentRoutes } from "./incidentRoutes.ts";
export { Watchdog } from "./watchdog.ts";
export type { WatchdogDeps, HealthView } from "./watchdog.ts";
export { WatchdogRuntime } from "./watchdogRuntime.ts";
export type { WatchdogRuntimeOptions } from "./watchdogRuntime.ts";
export { watchdogConfigSchema, ACTIONS, CATEGORIES, SEVERITIES } from "./watchdogConfig.ts";
export type { WatchdogConfig, ActionName, CheckConfig, SignatureConfig, RuleConfig } from "./watchdogConfig.ts";
export { watchdogMigrations } from "./watchdogMigrations.ts";
export { SignatureMatcher } from "./signatureMatcher.ts";
export { BUILTIN_SIGNATURES } from "./signatureCatalog.ts";
export { DEFAULT_RULES } from "./defaultRules.ts";
export { SilenceStore, SilenceNotFoundError } from "./silenceStore.ts";
export type { Silence } from "./silenceStore.ts";
export { PatternMemory } from "./patternMemory.ts";
export { readCheckRows } from "./checkScheduler.ts";
export type { CheckRow } from "./checkScheduler.ts";
export { HttpProxyAdmin } from "./proxyAdmin.ts";
export type { ProxyAdmin, ProviderTimeout } from "./proxyAdmin.ts";
export type { Signal } from "./signal.ts";
export { ActionRequestStore } from "./actionRequestStore.ts";
export type { NewActionRequest } from "./actionRequestStore.ts";
export {
  ACTION_DECISIONS,
  ACTION_REQUEST_STATUSES,
  DECIDERS,
  ActionAlreadyDecidedError,
  ActionExpiredError,
  NoActionRequestError,
  canTransition,
  describeRequestStatus,
  refuseDecision,
} from "./actionRequest.ts";
export type { ActionDecision, ActionRequest, ActionRequestStatus, Decider } from "./actionRequest.ts";
