import { silenceCovering, silenceTargetsOf, type Incident, type Silence } from "../watchdog/index.ts";

export interface SilencedInput {
  checks: Array<{ name: string; kind: string; state: string; severity?: string }>;
  /** Open incidents per severity, each with its most recent title (silenced ones left out). */
  openIncidents: Array<{ severity: string; count: number; title: string }>;
  /** What fails under a silence: a failing check's name, an open incident's title. */
  silenced: string[];
}

/**
 * Takes what an agentd silence covers out of the verdict's fail and warn counts and names it
 * instead (a `warn` reason): maintenance is neither all clear nor a page. `open` is the open
 * incidents, newest first. Pure.
 */
export function applySilences(
  checks: ReadonlyArray<{ name: string; kind: string; state: string; severity?: string }>,
  open: readonly Incident[],
  silences: readonly Silence[],
): SilencedInput {
  const covered = (targets: string[]) => silences.some((silence) => targets.includes(silence.target));
  const silenced: string[] = [];
  const kept = checks.filter((check) => {
    if (check.state !== "fail" || !covered(silenceTargetsOf(`check.${check.kind}`, `check:${check.name}`))) return true;
    silenced.push(check.name);
    return false;
  });
  const bySeverity = new Map<string, { severity: string; count: number; title: string }>();
  for (const incident of open) {
    if (silenceCovering(incident, silences)) {
      const component = typeof incident.details.component === "string" ? incident.details.component : "";
      if (!silenced.includes(component.replace(/^check:/, ""))) silenced.push(incident.title);
      continue;
    }
    const entry = bySeverity.get(incident.severity);
    if (entry) entry.count++;
    else bySeverity.set(incident.severity, { severity: incident.severity, count: 1, title: incident.title });
  }
  return { checks: kept, openIncidents: [...bySeverity.values()], silenced };
}
