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

/**
 * An incident's history, oldest first: first and last seen, and between them the store's
 * timeline events (the watchdog's decisions, state changes). A store without the timeline table
 * still has the `<what>_at`/`<what>_by` marks setState leaves in details, so those stand in.
 */
export function incidentTimeline(incident: Incident, events: IncidentEvent[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [{ at: incident.first_seen, label: "first seen" }];
  if (events.length > 0) {
    for (const event of events) entries.push({ at: event.ts, label: event.kind, note: event.message });
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
