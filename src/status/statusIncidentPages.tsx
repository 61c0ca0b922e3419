import type { Incident, IncidentEvent } from "../watchdog/index.ts";
import { formatTime } from "./statusFormat.ts";
import { Ago } from "./statusCard.tsx";
import { IncidentActionRequest } from "./statusIncidentAction.tsx";
import { IncidentRowView, IncidentTable } from "./statusTables.tsx";
import { incidentTimeline } from "./statusIncidentTimeline.ts";
import { Layout, renderDocument } from "./statusLayout.tsx";
import type { PageWindow } from "./statusPagination.ts";
import type { IncidentFilter, IncidentRow } from "./statusSnapshot.ts";

const INCIDENT_FILTERS: readonly IncidentFilter[] = ["all", "open", "acknowledged", "resolved", "unresolved"];

export function isIncidentFilter(value: string): value is IncidentFilter {
  return (INCIDENT_FILTERS as readonly string[]).includes(value);
}

export function Pager({ base, window, query = {} }: { base: string; window: PageWindow; query?: Record<string, string> }) {
  const link = (page: number) => `${base}?${new URLSearchParams({ ...query, page: String(page) })}`;
  return (
    <nav class="pager" aria-label="pages">
      {window.page > 1 ? (
        <a href={link(window.page - 1)} rel="prev">
          ← Newer
        </a>
      ) : (
        <span class="note">← Newer</span>
      )}
      <span>
        page {window.page} of {window.pages} ({window.total} in all)
      </span>
      {window.page < window.pages ? (
        <a href={link(window.page + 1)} rel="next">
          Older →
        </a>
      ) : (
        <span class="note">Older →</span>
      )}
    </nav>
  );
}

export interface IncidentListProps {
  filter: IncidentFilter;
  window: PageWindow;
  rows: IncidentRow[];
  now: number;
}

function IncidentListPage({ filter, window, rows, now }: IncidentListProps) {
  return (
    <Layout title="agentd — incidents" generatedAt={now} live single>
      <section class="card">
        <h2>Incidents</h2>
        <nav class="filters" aria-label="filter">
          {INCIDENT_FILTERS.map((f) => (
            <a href={`/status/incidents?state=${f}`} aria-current={f === filter ? "page" : undefined}>
              {f}
            </a>
          ))}
        </nav>
        {rows.length === 0 ? (
          <p class="empty">
            {window.total === 0
              ? `No ${filter === "all" ? "" : `${filter} `}incidents.`
              : `Page ${window.page} is past the last page (${window.pages}).`}
          </p>
        ) : (
          <div class="table-wrap">
            <IncidentTable rows={rows} now={now} />
          </div>
        )}
        <Pager base="/status/incidents" window={window} query={filter === "all" ? {} : { state: filter }} />
      </section>
    </Layout>
  );
}

function IncidentDetailPage({ incident, events, now }: { incident: Incident; events: IncidentEvent[]; now: number }) {
  const { details, action_request: request, ...row } = incident;
  const facts: Array<[string, string | number]> = [
    ["dedup key", incident.dedup_key],
    ["category", incident.category],
    ["severity", incident.severity],
    ["first seen", formatTime(incident.first_seen)],
    ["last seen", formatTime(incident.last_seen)],
    ["count", incident.count],
    ["tier", incident.tier ?? "-"],
    ["action", incident.action ?? "-"],
    ["verdict", incident.verdict ?? "-"],
  ];
  return (
    <Layout title={`agentd — incident ${incident.id}`} generatedAt={now} live single>
      <section class="card">
        <h2>
          Incident {incident.id}: {incident.title}
        </h2>
        <div class="table-wrap">
          <IncidentTable rows={[row]} now={now} />
        </div>
        <dl class="facts">
          {facts.map(([label, value]) => (
            <>
              <dt>{label}</dt>
              <dd>{value}</dd>
            </>
          ))}
        </dl>
      </section>
      {request && <IncidentActionRequest request={request} now={now} />}
      <section class="card">
        <h2>Timeline</h2>
        <ol class="timeline">
          {incidentTimeline(incident, events).map((entry) => (
            <li>
              <span class="mono">{formatTime(entry.at)}</span> (<Ago at={entry.at} now={now} />) {entry.label}
              {entry.by ? ` by ${entry.by}` : ""}
              {entry.note ? `: ${entry.note}` : ""}
            </li>
          ))}
        </ol>
      </section>
      <section class="card">
        <h2>Details</h2>
        {Object.keys(details).length === 0 ? (
          <p class="empty">No details recorded.</p>
        ) : (
          <pre class="details">{JSON.stringify(details, null, 2)}</pre>
        )}
      </section>
    </Layout>
  );
}

export function renderIncidentListPage(props: IncidentListProps): string {
  return renderDocument(<IncidentListPage {...props} />);
}

export function renderIncidentPage(incident: Incident, events: IncidentEvent[], now: number): string {
  return renderDocument(<IncidentDetailPage incident={incident} events={events} now={now} />);
}

/** The answer to an Acknowledge/Resolve click: the incident's row, swapped in place by htmx. */
export function renderIncidentRow(incident: Incident, now: number): string {
  const { details: _details, ...row } = incident;
  return String(<IncidentRowView incident={row} now={now} />);
}
