import type { HealthCheck } from "../core/health/index.ts";

/** `pty:sessions`: how many sessions are open; a warning from 90% of the limit, before opens start evicting. */
export function sessionsHealth(count: number, maxSessions: number): HealthCheck {
  const nearLimit = count >= Math.ceil(maxSessions * 0.9);
  return {
    key: "pty:sessions",
    status: nearLimit ? "warn" : "pass",
    observedValue: count,
    observedUnit: "sessions",
    ...(nearLimit ? { output: `${count} of at most ${maxSessions} PTY sessions are open` } : {}),
  };
}
