import type { HealthStatus } from "../core/health/index.ts";
import type { MetricFamily } from "../core/metrics/index.ts";
import type { HostVerdict } from "./hostVerdict.ts";

const STATES: readonly HealthStatus[] = ["pass", "warn", "fail"];

/**
 * The host's verdict as a gauge, 1 for its current state (as `agentd status`, the page and the
 * badge read it): what the shipped AgentdHostFailing and AgentdHostWarning rules alert on. Pure.
 */
export function verdictMetricFamily(verdict: HostVerdict): MetricFamily {
  return {
    name: "agentd_verdict",
    help: "The host's verdict (pass, warn, fail): 1 for the current one. agentd status exits 1 on fail.",
    type: "gauge",
    samples: STATES.map((state) => ({ labels: { state }, value: verdict.status === state ? 1 : 0 })),
  };
}
