/** One entry of /health's `checks`, keyed `component:measurement` (health-check draft). */
export type HealthStatus = "pass" | "warn" | "fail";

export interface HealthCheck {
  /** `component:measurement`, e.g. `store:writable`, `provider.openai:breaker`. */
  key: string;
  status: HealthStatus;
  observedValue?: number | string | boolean;
  observedUnit?: string;
  output?: string;
  time?: string;
}

/** Something that can report checks: the store, the proxy's providers, the PTY manager, … */
export type HealthSource = () => HealthCheck[] | Promise<HealthCheck[]>;

export function worstStatus(statuses: Iterable<HealthStatus>): HealthStatus {
  let worst: HealthStatus = "pass";
  for (const status of statuses) {
    if (status === "fail") return "fail";
    if (status === "warn") worst = "warn";
  }
  return worst;
}
