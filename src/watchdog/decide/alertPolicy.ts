import { severityAtLeast, type Decision } from "../checks/signal.ts";
import type { Severity } from "../../core/config/sections/watchdogConfig.ts";

/**
 * Whether a decision on an incident must also reach a person. An error or critical incident is
 * never kept from the page by what the watchdog learned: when tier 2 or 3 acts on it, or anything
 * decides to ignore it, the alert goes out too (once per incident; silences are checked before).
 */
export function alsoAlerts(decision: Pick<Decision, "tier" | "action">, severity: Severity, alreadyAlerted: boolean): boolean {
  if (alreadyAlerted || decision.action === "alert" || !severityAtLeast(severity, "error")) return false;
  return decision.tier >= 2 || decision.action === "ignore";
}

/** Actions that are never learned as fixes: they change nothing that could be verified. */
export function learnable(action: string): boolean {
  return action !== "alert" && action !== "ignore";
}
