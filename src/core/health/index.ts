export { worstStatus } from "./healthCheck.ts";
export type { HealthCheck, HealthSource, HealthStatus } from "./healthCheck.ts";
export { buildHealthDocument, collectChecks } from "./healthDocument.ts";
export type { HealthDocument } from "./healthDocument.ts";
export { cachedFor } from "./cachedFor.ts";
