import type { Incident, IncidentEvent } from "../watchdog/index.ts";

export interface TimelineEntry {
  at: number;
  label: string;
  by?: string;
  note?: string;
}

function isTime(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value > 0;
}

/** What each kind of recorded event means, in words; the event's own message follows. */
const EVENT_WORDS: Record<string, string> = {
  signal: "the watchdog saw",
  alert: "alert sent",
  alert_resolved: "alert resolved",
  action_requested: "asked a person to allow a command",
  action: "action taken",
  action_failed: "action failed",
  action_expired: "the request for a decision expired",
  action_cancelled: "the request for a decision was withdrawn",
  verdict: "checked whether the fix held",
  diagnosis: "diagnosis",
  diagnostic: "ran a diagnostic",
  learned: "learned",
  model_refused: "the model declined",
  note: "note",
  queued: "queued for a decision",
  silenced: "silenced",
  silence_ended: "silence ended",
  "watchdog.incident_resolved": "resolved by the watchdog",
};

/** One recorded event in words: a state change says who, as stored; any other kind says what it was, then its message. */
function eventEntry(event: IncidentEvent): TimelineEntry {
  const { state, by } = event.fields;
  if (event.kind === "state" && typeof state === "string") return { at: event.ts, label: state, ...(typeof by === "string" ? { by } : {}) };
  const label = EVENT_WORDS[event.kind] ?? event.kind.replace(/[._]/g, " ");
  return { at: event.ts, label, ...(event.message ? { note: event.message } : {}) };
}

/**
 * An incident's history, oldest first: first and last seen, and between them the store's
 * timeline events (the watchdog's decisions, state changes). A store without the timeline table
 * still has the `<what>_at`/`<what>_by` marks setState leaves in details, so those stand in.
 */
export function incidentTimeline(incident: Incident, events: IncidentEvent[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [{ at: incident.first_seen, label: "first seen" }];
  if (events.length > 0) {
    for (const event of events) entries.push(eventEntry(event));
  } else {
    for (const [key, value] of Object.entries(incident.details)) {
      if (!key.endsWith("_at") || !isTime(value)) continue;
      const what = key.slice(0, -3);
      const by = incident.details[`${what}_by`];
      entries.push({ at: value, label: what.replaceAll("_", " "), ...(typeof by === "string" ? { by } : {}) });
    }
  }
  if (incident.last_seen !== incident.first_seen || incident.count > 1)
    entries.push({ at: incident.last_seen, label: `last seen (${incident.count} occurrences)` });
  // Stable: entries at the same time keep their recorded order.
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => a.entry.at - b.entry.at || a.index - b.index)
    .map(({ entry }) => entry);
}
