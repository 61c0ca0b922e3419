import type { Incident } from "./incidents/incidentStore.ts";
import type { PatternOutcome } from "./decide/patternMemory.ts";
import type { Redactor } from "../core/redaction/index.ts";
import type { IncidentReport } from "./decide/tier3Advisor.ts";
import type { TrackedIncident } from "./incidents/trackedIncident.ts";
import type { HealthView } from "./healthView.ts";
import type { HostFacts } from "./hostFacts.ts";
import type { CheckConfig } from "../core/config/sections/watchdogConfig.ts";

/** What tier 3 is told beside the incident itself. */
export interface ReportContext {
  /** The check the incident is about, or the one that verifies its signature. */
  check?: CheckConfig;
  host: HostFacts;
  /** Other incidents, newest first; the incident itself is left out here. */
  recent: readonly Incident[];
}

const RELATED = 5;

/** A configured check with every string value redacted (a URL may carry a password, an argv a token). */
function redactedCheck(check: CheckConfig, redactor: Redactor): Record<string, unknown> {
  const redact = (v: unknown): unknown => (typeof v === "string" ? redactor.redact(v) : Array.isArray(v) ? v.map(redact) : v);
  return Object.fromEntries(Object.entries(check).map(([k, v]) => [k, redact(v)]));
}

/** The structured report tier 3 sends: agentd's facts, then the system's own text as untrusted data; all redacted, bounded in size. */
export function buildIncidentReport(
  tracked: TrackedIncident,
  incident: Incident,
  health: HealthView,
  recentLines: readonly string[],
  history: readonly PatternOutcome[],
  redactor: Redactor,
  maxLines: number,
  context: ReportContext,
): IncidentReport {
  const checkSignal = [...tracked.signals.values()].find(({ signal }) => signal.id.startsWith("check.") && signal.line)?.signal;
  return {
    incident: {
      id: incident.id,
      title: incident.title,
      category: incident.category,
      severity: tracked.severity,
      component: tracked.fingerprint,
      first_seen: new Date(incident.first_seen).toISOString(),
      count: incident.count,
    },
    health: { ok: health.ok, ...health.detail },
    signals: [...tracked.signals.values()].map((t) => ({ id: t.signal.id, title: t.signal.title, count: t.count })),
    history: history.map((h) => ({ action: h.action, tier: h.tier, verdict: h.verdict, at: new Date(h.ts).toISOString() })),
    already_tried: [...tracked.tried],
    ...(context.check ? { check: redactedCheck(context.check, redactor) } : {}),
    host: context.host,
    related: context.recent
      .filter((i) => i.id !== incident.id)
      .slice(0, RELATED)
      .map((i) => ({
        id: i.id,
        title: redactor.redact(i.title),
        component: i.fingerprint ?? null,
        severity: i.severity,
        state: i.state,
        last_seen: new Date(i.last_seen).toISOString(),
      })),
    untrusted: {
      signals: [...tracked.signals.values()].map(({ signal }) => ({
        id: signal.id,
        fields: Object.fromEntries(Object.entries(signal.fields).map(([k, v]) => [k, typeof v === "string" ? redactor.redact(v) : v])),
        ...(signal.line ? { line: redactor.redact(signal.line.slice(0, 1000)) } : {}),
      })),
      recent_log_lines: (maxLines > 0 ? recentLines.slice(-maxLines) : []).map((line) => redactor.redact(line.slice(0, 1000))),
      ...(checkSignal?.line ? { check_output: redactor.redact(checkSignal.line.slice(0, 2000)) } : {}),
    },
  };
}
