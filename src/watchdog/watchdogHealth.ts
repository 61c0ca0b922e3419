import type { HealthCheck } from "../core/health/index.ts";
import type { CheckRow } from "./checks/checkRow.ts";
import type { IncidentStore } from "./incidents/incidentStore.ts";

/**
 * The host's state in agentd's own /health, as warnings only: Docker and systemd act on /health,
 * and a failing service agentd watches is no reason to restart agentd; but /health must not say
 * `pass` while a check fails or an incident is open.
 */
export function watchdogHealthChecks(rows: readonly CheckRow[], incidents: IncidentStore): HealthCheck[] {
  const failing = rows.filter((row) => row.state === "fail").map((row) => row.name);
  const open = incidents.count("open");
  return [
    {
      key: "watchdog:checks",
      status: failing.length > 0 ? "warn" : "pass",
      observedValue: failing.length,
      observedUnit: "failing",
      ...(failing.length > 0 ? { output: `failing: ${failing.join(", ")}` } : {}),
    },
    {
      key: "incidents:open",
      status: open > 0 ? "warn" : "pass",
      observedValue: open,
      ...(open > 0 ? { output: `${open} open incident${open === 1 ? "" : "s"}` } : {}),
    },
  ];
}
