import { CounterFamily, familiesText, labelText } from "../core/metrics/index.ts";
import type { HopState } from "./hopConnection.ts";
import type { HopInfo } from "./hopManager.ts";

const STATES: readonly HopState[] = ["connecting", "connected", "reconnecting", "fallback", "closed"];

/** Hops by state; every state is written (0 when none), so an alert on one needs no `absent()`. */
export function hopMetricsText(hops: readonly HopInfo[]): string {
  const family = new CounterFamily("agentd_hops", "Hops by connection state.", "gauge");
  for (const state of STATES) family.set(labelText({ state }), hops.filter((hop) => hop.state === state).length);
  return familiesText([family]);
}
