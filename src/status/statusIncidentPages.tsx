import type { Incident, IncidentEvent } from "../watchdog/index.ts";
import { IncidentRowView, IncidentTable } from "./statusTables.tsx";
import { Layout, pageTitle, renderDocument } from "./statusLayout.tsx";
import type { PageWindow } from "./statusPagination.ts";
import type { IncidentFilter, IncidentRow, WatchdogCheckRow } from "./statusSnapshot.ts";
import { IncidentDetailPage } from "./statusIncidentDetail.tsx";

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
    <Layout title={pageTitle("incidents")} generatedAt={now} live single>
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

export function renderIncidentListPage(props: IncidentListProps): string {
  return renderDocument(<IncidentListPage {...props} />);
}

export function renderIncidentPage(incident: Incident, events: IncidentEvent[], now: number, check?: WatchdogCheckRow): string {
  return renderDocument(<IncidentDetailPage incident={incident} events={events} check={check} now={now} />);
}

/** The answer to an Acknowledge/Resolve click: the incident's row, swapped in place by htmx. */
export function renderIncidentRow(incident: Incident, now: number): string {
  const { details: _details, ...row } = incident;
  return String(<IncidentRowView incident={row} now={now} />);
}
