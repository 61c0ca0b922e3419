import { hostname } from "node:os";
import type { SessionTranscript } from "../agent/index.ts";
import type { HealthDocument } from "../core/health/index.ts";
import type { Incident, IncidentStore } from "../watchdog/index.ts";
import { CheckHistory } from "./checkHistory.ts";
import { checkRowsForPage } from "./checkRows.ts";
import { hostVerdict } from "./hostVerdict.ts";
import { applySilences, type SilencedInput } from "./verdictSilences.ts";
import type { PageDecisions } from "./decisionRoutes.ts";
import type {
  ApprovalRow,
  HopRow,
  IncidentFilter,
  IncidentRow,
  Page,
  PageRequest,
  ProviderRow,
  PtySessionRow,
  SectionName,
  SessionRow,
  SilenceRow,
  StatusSection,
  StatusSnapshot,
  StatusSource,
  WatchdogCheckRow,
  WorkerInfo,
} from "./statusSnapshot.ts";
import { STATUS_SCHEMA } from "./statusSnapshot.ts";

export const INCIDENTS_SHOWN = 10;
export const SESSIONS_SHOWN = 10;

type RowsSource<Row> = () => Row[] | Promise<Row[]>;

/**
 * The worker's capabilities as the page sees them. A capability that is not part of this worker
 * leaves its callback out, and its section says so instead of showing an empty table.
 */
export interface StatusSources {
  health: () => Promise<HealthDocument>;
  worker: () => WorkerInfo;
  incidents: IncidentStore;
  providers?: RowsSource<ProviderRow>;
  watchdogChecks?: RowsSource<WatchdogCheckRow>;
  sessions?: (page: PageRequest) => Page<SessionRow>;
  approvals?: RowsSource<ApprovalRow>;
  ptySessions?: RowsSource<PtySessionRow>;
  hops?: RowsSource<HopRow>;
  silences?: RowsSource<SilenceRow>;
  transcript?: (id: string) => SessionTranscript;
  decisions?: PageDecisions;
}

/** What an absent capability's section says. */
export const NOT_CONFIGURED: Record<"providers" | "watchdog" | "sessions" | "approvals" | "pty" | "hops" | "silences", string> = {
  providers: "The LLM proxy is not available in this agentd.",
  watchdog: "The watchdog's checks are not available in this agentd.",
  sessions: "The agent is not available in this agentd.",
  approvals: "The agent is not available in this agentd, so nothing waits for approval.",
  pty: "PTY sessions are not available in this agentd.",
  hops: "Hops are not available in this agentd.",
  silences: "The watchdog's silences are not available in this agentd.",
};

async function readSection<Row>(source: RowsSource<Row> | undefined, note: string, label: string): Promise<StatusSection<Row>> {
  if (!source) return { configured: false, note, rows: [] };
  try {
    return { configured: true, rows: await source() };
  } catch (error) {
    return { configured: true, error: `Cannot read ${label}: ${(error as Error).message}`, rows: [] };
  }
}

function incidentRow({ details: _details, ...row }: Incident): IncidentRow {
  return row;
}

/**
 * The most recent open and acknowledged incidents. Two queries that each walk the (state,
 * last_seen) index beat one `state != 'resolved'` query, which scans and sorts every unresolved row.
 */
function latestUnresolved(incidents: IncidentStore): Incident[] {
  const merged = [
    ...incidents.list({ state: "open", limit: INCIDENTS_SHOWN }),
    ...incidents.list({ state: "acknowledged", limit: INCIDENTS_SHOWN }),
  ];
  return merged.sort((a, b) => b.last_seen - a.last_seen || b.id - a.id).slice(0, INCIDENTS_SHOWN);
}

/**
 * The verdict's checks and open incidents with what silences cover set apart; without a silence
 * in force, one grouped query. A store that cannot answer counts as no incident (its section shows the error).
 */
function verdictFacts(incidents: IncidentStore, checks: WatchdogCheckRow[], silences: SilenceRow[]): SilencedInput {
  try {
    if (silences.length === 0) return { checks, openIncidents: incidents.openBySeverity(), silenced: [] };
    return applySilences(checks, incidents.list({ state: "open", limit: 1000 }), silences);
  } catch {
    return silences.length === 0 ? { checks, openIncidents: [], silenced: [] } : applySilences(checks, [], silences);
  }
}

export function createStatusSource(sources: StatusSources): StatusSource {
  const { incidents } = sources;
  const checkHistory = new CheckHistory();
  const verdictOf = (
    health: HealthDocument,
    watchdog: StatusSection<WatchdogCheckRow>,
    approvals: StatusSection<ApprovalRow>,
    silences: StatusSection<SilenceRow>,
  ) =>
    hostVerdict({
      ...verdictFacts(incidents, watchdog.rows, silences.rows),
      pendingApprovals: approvals.rows.length,
      health: Object.entries(health.checks).flatMap(([key, list]) => list.map((check) => ({ key, status: check.status }))),
    });
  const readers: { [K in SectionName]: () => Promise<StatusSnapshot[K]> } = {
    verdict: async () => {
      const [health, watchdog, approvals, silences] = await Promise.all([
        sources.health(),
        readers.watchdog(),
        readers.approvals(),
        readers.silences(),
      ]);
      return verdictOf(health, watchdog, approvals, silences);
    },
    health: sources.health,
    worker: async () => sources.worker(),
    providers: () => readSection(sources.providers, NOT_CONFIGURED.providers, "the providers"),
    watchdog: async () => {
      const [checks, silences] = await Promise.all([
        readSection(sources.watchdogChecks, NOT_CONFIGURED.watchdog, "the watchdog checks"),
        readers.silences(),
      ]);
      const history = checkHistory.observe(checks.rows, Date.now());
      return { ...checks, rows: checkRowsForPage(checks.rows, silences.rows, history) };
    },
    incidents: async () => {
      try {
        const counts = {
          open: incidents.count("open"),
          acknowledged: incidents.count("acknowledged"),
          resolved: incidents.count("resolved"),
        };
        return { configured: true, counts, rows: latestUnresolved(incidents).map(incidentRow) };
      } catch (error) {
        return {
          configured: true,
          error: `Cannot read the incidents: ${(error as Error).message}`,
          counts: { open: 0, acknowledged: 0, resolved: 0 },
          rows: [],
        };
      }
    },
    sessions: async () => {
      const { sessions } = sources;
      if (!sessions) return { configured: false, note: NOT_CONFIGURED.sessions, total: 0, rows: [] };
      try {
        const page = sessions({ limit: SESSIONS_SHOWN, offset: 0 });
        return { configured: true, total: page.total, rows: page.rows };
      } catch (error) {
        return { configured: true, error: `Cannot read the sessions: ${(error as Error).message}`, total: 0, rows: [] };
      }
    },
    approvals: () => readSection(sources.approvals, NOT_CONFIGURED.approvals, "the pending approvals"),
    pty: () => readSection(sources.ptySessions, NOT_CONFIGURED.pty, "the PTY sessions"),
    hops: () => readSection(sources.hops, NOT_CONFIGURED.hops, "the hops"),
    silences: () => readSection(sources.silences, NOT_CONFIGURED.silences, "the silences"),
  };

  return {
    section: (name) => readers[name](),
    health: sources.health,
    async snapshot() {
      const [health, worker, providers, watchdog, incidentSection, sessions, approvals, pty, hops, silences] = await Promise.all([
        readers.health(),
        readers.worker(),
        readers.providers(),
        readers.watchdog(),
        readers.incidents(),
        readers.sessions(),
        readers.approvals(),
        readers.pty(),
        readers.hops(),
        readers.silences(),
      ]);
      return {
        schema: STATUS_SCHEMA,
        host: hostname(),
        generated_at: new Date().toISOString(),
        verdict: verdictOf(health, watchdog, approvals, silences),
        health,
        worker,
        providers,
        watchdog,
        incidents: incidentSection,
        sessions,
        approvals,
        pty,
        hops,
        silences,
      };
    },
    incidentPage(filter: IncidentFilter, page: PageRequest) {
      const state = filter === "all" ? undefined : filter;
      return { total: incidents.count(state), rows: incidents.list({ state, limit: page.limit, offset: page.offset }).map(incidentRow) };
    },
    incident: (id) => incidents.get(id),
    incidentEvents: (id) => incidents.timeline(id),
    setIncidentState: (id, state, by) => incidents.setState(id, state, by),
    sessionPage: (page) => sources.sessions?.(page),
    transcript: (id) => sources.transcript?.(id),
    decisions: sources.decisions ?? {},
  };
}
