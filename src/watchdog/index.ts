export { RestartPolicy } from "./restartPolicy.ts";
export type { RestartDecision, RestartPolicyOptions } from "./restartPolicy.ts";
export { IncidentStore, IncidentNotFoundError } from "./incidentStore.ts";
export type { Incident, IncidentState, IncidentListOptions } from "./incidentStore.ts";
