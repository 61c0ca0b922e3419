import type { MetricFamily } from "../core/metrics/index.ts";
import type { HopState } from "./hopSpec.ts";
import type { HopInfo } from "./hopManager.ts";

const STATES: readonly HopState[] = ["connecting", "connected", "reconnecting", "fallback", "closed"];

/** Hops by state; every state is written (0 when none), so an alert on one needs no `absent()`. */
export function hopMetricFamilies(hops: readonly HopInfo[]): MetricFamily[] {
  return [
    {
      name: "agentd_hops",
      help: "Hops by connection state.",
      type: "gauge",
      samples: STATES.map((state) => ({ labels: { state }, value: hops.filter((hop) => hop.state === state).length })),
    },
  ];
}
