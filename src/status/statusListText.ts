import type { Incident, IncidentEvent } from "../watchdog/index.ts";
import { formatAge, formatTime, oneLine, truncate } from "./statusFormat.ts";
import { incidentTimeline } from "./statusIncidentTimeline.ts";
import type { PageWindow } from "./statusPagination.ts";
import type { IncidentFilter, IncidentRow, SessionRow } from "./statusSnapshot.ts";
import { NOT_CONFIGURED } from "./statusSource.ts";
import { TEXT_WIDTH } from "./statusText.ts";
import { renderTextTable } from "./statusTextTable.ts";

function finish(lines: string[]): string {
  return `${lines.map((line) => truncate(line, TEXT_WIDTH)).join("\n")}\n`;
}

/** curl's view of /status/incidents: one page as a table, with how to get the next one. */
export function renderIncidentListText(filter: IncidentFilter, window: PageWindow, rows: IncidentRow[], now: number): string {
  const lines = [`INCIDENTS  ${filter}, page ${window.page} of ${window.pages}, ${window.total} in all`];
  if (rows.length === 0) lines.push(window.total === 0 ? "  (none)" : `  page ${window.page} is past the last page (${window.pages})`);
  else
    lines.push(
      ...renderTextTable(
        [
          { header: "ID", align: "right" },
          { header: "STATE" },
          { header: "SEVERITY" },
          { header: "COUNT", align: "right" },
          { header: "LAST SEEN" },
          { header: "TITLE", flex: true },
        ],
        rows.map((i) => [String(i.id), i.state, i.severity, String(i.count), formatAge(i.last_seen, now), i.title]),
        TEXT_WIDTH,
      ),
    );
  if (window.page < window.pages)
    lines.push(
      "",
      `  next: /status/incidents?${new URLSearchParams({ ...(filter === "all" ? {} : { state: filter }), page: String(window.page + 1) })}`,
    );
  return finish(lines);
}

export function renderIncidentText(incident: Incident, events: IncidentEvent[], now: number): string {
  const lines = [
    `INCIDENT ${incident.id}  ${incident.state}  ${oneLine(incident.title)}`,
    `  dedup key  ${oneLine(incident.dedup_key)}`,
    `  category   ${oneLine(incident.category)}   severity ${oneLine(incident.severity)}   count ${incident.count}`,
    `  tier ${incident.tier ?? "-"}   action ${oneLine(incident.action ?? "-")}   verdict ${oneLine(incident.verdict ?? "-")}`,
    `  last seen  ${formatTime(incident.last_seen)} (${formatAge(incident.last_seen, now)})`,
    ...outputLines(incident),
    ...commandRequestLines(incident),
    "",
    "TIMELINE",
    ...incidentTimeline(incident, events).map(
      (entry) =>
        `  ${formatTime(entry.at)}  ${formatAge(entry.at, now).padEnd(10)}  ${oneLine(entry.label)}${entry.by ? ` by ${oneLine(entry.by)}` : ""}${entry.note ? `: ${oneLine(entry.note)}` : ""}`,
    ),
  ];
  return finish(lines);
}

/** What the incident's latest signal said (a failing check's output), cut to the line. */
function outputLines(incident: Incident): string[] {
  const { output } = incident.details;
  return typeof output === "string" && output ? [`  output     ${truncate(oneLine(output), TEXT_WIDTH - 13)}`] : [];
}

/** A command the watchdog wants to run: what it is, its state, and how to decide it while pending. */
function commandRequestLines(incident: Incident): string[] {
  const request = incident.action_request;
  if (!request) return [];
  const lines = [
    `  command    ${oneLine(request.command)}   ${request.status}${request.decided_by ? ` by ${oneLine(request.decided_by)}` : ""}${request.outcome ? `: ${oneLine(request.outcome)}` : ""}`,
  ];
  if (request.status === "pending")
    lines.push(`             decide with: agentd incidents approve ${incident.id} | agentd incidents deny ${incident.id}`);
  return lines;
}

/** curl's view of /status/sessions. */
export function renderSessionListText(page: { window: PageWindow; rows: SessionRow[] } | undefined, now: number): string {
  if (!page) return finish(["SESSIONS", `  not configured: ${NOT_CONFIGURED.sessions}`]);
  const { window, rows } = page;
  const lines = [`SESSIONS  page ${window.page} of ${window.pages}, ${window.total} in all`];
  if (rows.length === 0) lines.push(window.total === 0 ? "  (none)" : `  page ${window.page} is past the last page (${window.pages})`);
  else
    lines.push(
      ...renderTextTable(
        [
          { header: "ID" },
          { header: "TARGET" },
          { header: "MODEL" },
          { header: "STATE" },
          { header: "ACTIVE" },
          { header: "TITLE", flex: true },
        ],
        rows.map((s) => [s.id, s.target, s.model, s.state, formatAge(s.last_activity, now), s.title ?? ""]),
        TEXT_WIDTH,
      ),
    );
  if (window.page < window.pages) lines.push("", `  next: /status/sessions?page=${window.page + 1}`);
  return finish(lines);
}
