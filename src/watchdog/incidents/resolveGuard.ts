import { AgentdError } from "../../core/errors/index.ts";
import type { CheckRow } from "../checks/checkRow.ts";

/** What of an incident says which check it is about (the store's Incident has these). */
interface AboutCheck {
  id: number;
  fingerprint?: string | null;
  details: Record<string, unknown>;
}

/**
 * An incident about a configured check may not be resolved by hand while the check still fails:
 * the incident is that failure (each failing run counts on it), and resolving it would only end its
 * page until the next run opened another. It resolves by itself once the check passes; a silence
 * is how to stop pages meanwhile.
 */
export class IncidentStillFailingError extends AgentdError {
  constructor(incident: Pick<AboutCheck, "id">, check: CheckRow) {
    const since = check.failing_since ? ` since ${new Date(check.failing_since).toISOString()}` : "";
    const output = check.output ? ` (${check.output.slice(0, 200)})` : "";
    super(
      "incident_still_failing",
      `Incident ${incident.id} stays open: check "${check.name}" still fails${since}${output}. It resolves by itself once the check passes; to stop its pages meanwhile, silence it: agentd silence ${check.name} 2h`,
      { param: "id" },
    );
  }
}

/** The failing check an incident is about, if any: what refuses resolving it by hand. Pure. */
export function stillFailingCheck(incident: Omit<AboutCheck, "id">, checks: readonly CheckRow[]): CheckRow | undefined {
  const component = typeof incident.details.component === "string" ? incident.details.component : (incident.fingerprint ?? "");
  if (!component.startsWith("check:")) return undefined;
  const name = component.slice("check:".length);
  return checks.find((check) => check.name === name && check.state === "fail");
}
