import type { Incident } from "./incidents/incidentStore.ts";
import type { PatternOutcome } from "./decide/patternMemory.ts";
import type { Redactor } from "../core/redaction/index.ts";
import type { IncidentReport } from "./decide/tier3Advisor.ts";
import type { TrackedIncident } from "./incidents/trackedIncident.ts";
import type { HealthView } from "./healthView.ts";

/** The structured report tier 3 sends: agentd's facts, then the system's own text as untrusted data; all redacted, bounded in size. */
export function buildIncidentReport(
  tracked: TrackedIncident,
  incident: Incident,
  health: HealthView,
  recentLines: readonly string[],
  history: readonly PatternOutcome[],
  redactor: Redactor,
  maxLines: number,
): IncidentReport {
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
    untrusted: {
      signals: [...tracked.signals.values()].map(({ signal }) => ({
        id: signal.id,
        fields: Object.fromEntries(Object.entries(signal.fields).map(([k, v]) => [k, typeof v === "string" ? redactor.redact(v) : v])),
        ...(signal.line ? { line: redactor.redact(signal.line.slice(0, 1000)) } : {}),
      })),
      recent_log_lines: (maxLines > 0 ? recentLines.slice(-maxLines) : []).map((line) => redactor.redact(line.slice(0, 1000))),
    },
  };
}
