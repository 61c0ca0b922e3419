import type { SessionTranscript } from "../agent/index.ts";
import type { HealthDocument, HealthStatus } from "../core/health/index.ts";
import type { Incident, IncidentEvent, IncidentState, Silence } from "../watchdog/index.ts";
import type { ProxyProviderStatus } from "../proxy/index.ts";
import type { CheckResult } from "./checkHistory.ts";
import type { PageDecisions } from "./decisionRoutes.ts";
import type { HostVerdict } from "./hostVerdict.ts";

/** The version of the /status JSON document; raised when a field changes meaning or goes away. */
export const STATUS_SCHEMA = 2;

export interface WorkerInfo {
  pid: number;
  supervisor_pid: number | null;
  version: string;
  uptime_s: number;
  restarts: number;
  memory_mb: number;
  /** How commands are kept from agentd: `command_user` (a uid of their own) or `unguarded`. */
  privilege_gate?: { mode: string; user: string | null; worker_user?: string; limits?: string };
  /** Set when the privilege gate does not hold (agentd not root, or its files within the command user's reach): why. */
  privilege_gate_problem?: string;
}

/**
 * One capability's part of the page. `configured: false` says the capability is absent from this
 * worker (not built in, or not set up), and `note` says what to do about it; `error` is set when
 * reading it failed, so the page shows the failure instead of an empty table.
 */
export interface StatusSection<Row> {
  configured: boolean;
  note?: string;
  error?: string;
  rows: Row[];
}

export interface ProviderRow {
  name: string;
  /** ok, degraded (recent errors), down (breaker open) or auth_failed. */
  state: string;
  breaker: "closed" | "open" | "half_open";
  /** When an open breaker lets the next probe through (epoch ms). */
  breaker_retry_at: number | null;
  requests: number;
  errors: number;
  p50_ms: number | null;
  p95_ms: number | null;
  /** Per model: answers to requests that offered tools, and the shares with calls found in text, repaired or unparseable. */
  tool_calls?: ProxyProviderStatus["tool_calls"];
}

export interface WatchdogCheckRow {
  name: string;
  /** http, tcp, command, process, disk, memory, probe, … */
  kind: string;
  /** info, warning, error (the default) or critical: a failing critical check fails the host. */
  severity?: string;
  state: HealthStatus | "unknown";
  /** When the state last changed (epoch ms). */
  last_change: number | null;
  output?: string;
  /** When the latest silence covering this check ends (epoch ms); absent when none does. */
  silenced_until?: number;
  /** Its recent results, oldest first, as this worker saw them (kept in memory: see checkHistory.ts). */
  history?: CheckResult[];
}

export type IncidentRow = Omit<Incident, "details">;

export interface IncidentCounts {
  open: number;
  acknowledged: number;
  resolved: number;
}

export interface SessionRow {
  id: string;
  /** local, or the hop it runs on. */
  target: string;
  model: string;
  /** e.g. running, waiting_approval, idle, done, failed. */
  state: string;
  started_at: number;
  last_activity: number;
  title?: string;
}

export interface ApprovalRow {
  id: string;
  /** agent (the model in a session), mcp (a client's direct call) or watchdog (a run_command). */
  kind: "agent" | "mcp" | "watchdog";
  /** Who asked, in words. */
  requested_by: string;
  /** The session whose transcript explains the call; null for the watchdog. */
  session_id: string | null;
  /** The watchdog's incident the command answers. */
  incident_id?: number;
  tool: string;
  scope: string;
  /** What would run, as the model asked for it (a command line, a path), redacted as the stored copies are. */
  summary: string;
  requested_at: number;
  /** The raw command the approver decides on; the spans the stored copies redact are marked. */
  command?: string;
  command_spans?: Array<{ text: string; redacted: boolean }>;
  workdir?: string;
  target?: string;
  /** Why: the user message of the turn that asked for the call, or the watchdog's incident title. */
  task?: string;
  /** Why the text check asked in the sudo scope. */
  reasons?: string[];
  /** A bare escalation's words as they will be exec'd (no shell reads them). */
  argv?: string[];
  /** What a decision is bound to; the page's buttons send it. */
  digest?: string;
}

export type SilenceRow = Silence;

export interface PtySessionRow {
  id: string;
  command: string;
  pid: number;
  running: boolean;
  exit_code: number | null;
  started_at: number;
  last_output_at: number | null;
}

export interface HopRow {
  name: string;
  /** user@host[:port] */
  target: string;
  /** Jump hosts, in order. */
  via: string[];
  /** connected, connecting, disconnected, failed. */
  state: string;
  remote_version: string | null;
  last_change: number | null;
  output?: string;
  /** The remote agentd's own /health verdict, read through the tunnel; null when unknown. */
  health?: string | null;
  /** Unresolved incidents on the remote host; null when unknown. */
  incidents_open?: number | null;
  /** The remote host's privilege gate (command_user, namespaces, unguarded; none for a fallback hop); null when unknown. */
  gate?: string | null;
}

export interface Page<Row> {
  total: number;
  rows: Row[];
}

export interface PageRequest {
  limit: number;
  offset: number;
}

/** Everything /status shows, in one document: the JSON view is this object as is. */
export interface StatusSnapshot {
  /** STATUS_SCHEMA: scripts check it before reading the rest. */
  schema: number;
  /** The machine's hostname: which host this verdict is about. */
  host: string;
  generated_at: string;
  /** The one answer, worst reason first: what the banner, the title, /badge.svg and `agentd status` say. */
  verdict: HostVerdict;
  health: HealthDocument;
  worker: WorkerInfo;
  providers: StatusSection<ProviderRow>;
  watchdog: StatusSection<WatchdogCheckRow>;
  /** Unresolved incidents (open and acknowledged), most recent first, at most INCIDENTS_SHOWN. */
  incidents: StatusSection<IncidentRow> & { counts: IncidentCounts };
  /** Most recent sessions, at most SESSIONS_SHOWN; `total` counts all of them. */
  sessions: StatusSection<SessionRow> & { total: number };
  approvals: StatusSection<ApprovalRow>;
  pty: StatusSection<PtySessionRow>;
  hops: StatusSection<HopRow>;
  /** Maintenance silences in force. */
  silences: StatusSection<SilenceRow>;
}

/** In page order: the verdict, then the approval queue pinned under it. */
export const SECTION_NAMES = [
  "verdict",
  "approvals",
  "health",
  "worker",
  "providers",
  "watchdog",
  "incidents",
  "silences",
  "sessions",
  "pty",
  "hops",
] as const;
export type SectionName = (typeof SECTION_NAMES)[number];

export function isSectionName(name: string): name is SectionName {
  return (SECTION_NAMES as readonly string[]).includes(name);
}

export type IncidentFilter = IncidentState | "unresolved" | "all";

/** What the page reads and changes; built by createStatusSource (statusSource.ts). */
export interface StatusSource {
  snapshot(): Promise<StatusSnapshot>;
  section<K extends SectionName>(name: K): Promise<StatusSnapshot[K]>;
  health(): Promise<HealthDocument>;
  incidentPage(filter: IncidentFilter, page: PageRequest): Page<IncidentRow>;
  /** Throws IncidentNotFoundError (404) for an unknown id. */
  incident(id: number): Incident;
  /** The incident's recorded events, oldest first (empty when the store has no timeline table). */
  incidentEvents(id: number): IncidentEvent[];
  setIncidentState(id: number, state: "acknowledged" | "resolved", by: string): Incident;
  /** undefined when the agent is not part of this worker. */
  sessionPage(page: PageRequest): Page<SessionRow> | undefined;
  /** undefined when the agent is not part of this worker; throws 404 for an unknown session. */
  transcript(id: string): SessionTranscript | undefined;
  /** What the page's Allow/Deny buttons call. */
  decisions: PageDecisions;
}
