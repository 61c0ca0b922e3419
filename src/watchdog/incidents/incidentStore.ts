import type { Database } from "bun:sqlite";
import { AgentdError } from "../../core/errors/index.ts";
import type { ActionRequest } from "./actionRequest.ts";
import { readCheckRows } from "../checks/checkScheduler.ts";
import { IncidentStillFailingError, stillFailingCheck } from "./resolveGuard.ts";

export type IncidentState = "open" | "acknowledged" | "resolved";
/** `denied`, `expired`, `cancelled`: a command that waited for approval and did not run. */
export type Verdict = "pending" | "success" | "failed" | "unverified" | "denied" | "expired" | "cancelled";

export interface Incident {
  id: number;
  dedup_key: string;
  title: string;
  category: string;
  severity: string;
  state: IncidentState;
  first_seen: number;
  last_seen: number;
  count: number;
  tier: number | null;
  action: string | null;
  verdict: string | null;
  details: Record<string, unknown>;
  /** Set by the watchdog migration: the component the incident groups, and its signal pattern. */
  fingerprint?: string | null;
  pattern?: string | null;
  /** `get` only: the latest command waiting for (or given) a person's decision, null when none. */
  action_request?: ActionRequest | null;
}

export interface IncidentEvent {
  id: number;
  incident_id: number;
  ts: number;
  kind: string;
  message: string;
  fields: Record<string, unknown>;
}

type IncidentRow = Omit<Incident, "details"> & { details: string };
type EventRow = Omit<IncidentEvent, "fields"> & { fields: string };

export interface IncidentListOptions {
  state?: IncidentState | "unresolved";
  limit?: number;
  offset?: number;
}

export interface NewIncident {
  fingerprint: string;
  pattern: string;
  title: string;
  category: string;
  severity: string;
  now: number;
  details?: Record<string, unknown>;
}

export class IncidentNotFoundError extends AgentdError {
  constructor(id: number) {
    super("incident_not_found", `No incident with id ${id}`);
  }
}

/** An incident keeps the start of what its latest signal said: enough to read, bounded in the store. */
const OUTPUT_CHARS = 500;

export function latestOutput(line: string): string {
  return line.slice(0, OUTPUT_CHARS);
}

function toIncident(row: IncidentRow): Incident {
  return { ...row, details: JSON.parse(row.details) as Record<string, unknown> };
}

/** Incidents in the shared store: read by the page and the CLI, written by the watchdog. */
export class IncidentStore {
  readonly #hasTimeline: boolean;
  readonly #hasRequests: boolean;

  constructor(readonly db: Database) {
    // The page may open a store with the base schema only; the timeline needs the watchdog migration.
    const hasTable = (name: string) =>
      db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?").get(name)!.n > 0;
    this.#hasTimeline = hasTable("incident_events");
    this.#hasRequests = hasTable("watchdog_action_requests");
  }

  list(options: IncidentListOptions = {}): Incident[] {
    const where = options.state === "unresolved" ? "WHERE state != 'resolved'" : options.state ? "WHERE state = $state" : "";
    const rows = this.db
      .query<IncidentRow, Record<string, string | number>>(
        `SELECT * FROM incidents ${where} ORDER BY last_seen DESC, id DESC LIMIT $limit OFFSET $offset`,
      )
      .all({
        ...(options.state && options.state !== "unresolved" ? { state: options.state } : {}),
        limit: options.limit ?? 50,
        offset: options.offset ?? 0,
      });
    return rows.map(toIncident);
  }

  count(state?: IncidentState | "unresolved"): number {
    const where = state === "unresolved" ? "WHERE state != 'resolved'" : state ? "WHERE state = ?" : "";
    const params = state && state !== "unresolved" ? [state] : [];
    return this.db.query<{ n: number }, string[]>(`SELECT count(*) AS n FROM incidents ${where}`).get(...params)?.n ?? 0;
  }

  /** Open incidents per severity, each with its most recent title: what the host's verdict reads. */
  openBySeverity(): Array<{ severity: string; count: number; title: string }> {
    return this.db
      .query<{ severity: string; count: number; title: string }, []>(
        // SQLite takes the bare `title` from the row max() picked: the most recently seen one.
        "SELECT severity, count(*) AS count, title, max(last_seen) AS last_seen FROM incidents WHERE state = 'open' GROUP BY severity",
      )
      .all()
      .map(({ severity, count, title }) => ({ severity, count, title }));
  }

  get(id: number): Incident {
    const row = this.db.query<IncidentRow, [number]>("SELECT * FROM incidents WHERE id = ?").get(id);
    if (!row) throw new IncidentNotFoundError(id);
    const incident = toIncident(row);
    if (!this.#hasRequests) return incident;
    const request = this.db
      .query<ActionRequest, [number]>("SELECT * FROM watchdog_action_requests WHERE incident_id = ? ORDER BY id DESC LIMIT 1")
      .get(id);
    return { ...incident, action_request: request ?? null };
  }

  /**
   * A person moves an incident forward (open → acknowledged → resolved); `by` says who (api, page,
   * cli). Resolving one whose check still fails is refused (IncidentStillFailingError, 409).
   */
  setState(id: number, state: "acknowledged" | "resolved", by: string): Incident {
    const current = this.get(id);
    if (state === "resolved" && current.state !== "resolved") {
      const failing = stillFailingCheck(current, readCheckRows(this.db));
      if (failing) throw new IncidentStillFailingError(current, failing);
    }
    return this.#move(current, state, by);
  }

  /** The watchdog ends an episode on its own evidence: its signals cleared, or a new episode of the component began. */
  closeEpisode(id: number): Incident {
    return this.#move(this.get(id), "resolved", "watchdog");
  }

  #move(current: Incident, state: "acknowledged" | "resolved", by: string): Incident {
    const { id } = current;
    if (current.state === "resolved" || (current.state === "acknowledged" && state === "acknowledged")) return current;
    const details = { ...current.details, [`${state}_by`]: by, [`${state}_at`]: Date.now() };
    this.db.run("UPDATE incidents SET state = ?, details = ? WHERE id = ?", [state, JSON.stringify(details), id]);
    this.addEvent(id, "state", `${state} by ${by}`, { state, by });
    return this.get(id);
  }

  /** The unresolved incident of a component, if any (one episode at a time per fingerprint). */
  findUnresolved(fingerprint: string): Incident | undefined {
    const row = this.db
      .query<IncidentRow, [string]>("SELECT * FROM incidents WHERE fingerprint = ? AND state != 'resolved' ORDER BY id DESC LIMIT 1")
      .get(fingerprint);
    return row ? toIncident(row) : undefined;
  }

  /** Opens a new episode; the dedup key is the fingerprint plus the episode's start. */
  open(incident: NewIncident): Incident {
    const row = this.db
      .query<{ id: number }, Record<string, string | number>>(
        `INSERT INTO incidents (dedup_key, fingerprint, pattern, title, category, severity, state, first_seen, last_seen, count, details)
         VALUES ($dedup_key, $fingerprint, $pattern, $title, $category, $severity, 'open', $now, $now, 1, $details) RETURNING id`,
      )
      .get({
        dedup_key: `${incident.fingerprint}@${incident.now}`,
        fingerprint: incident.fingerprint,
        pattern: incident.pattern,
        title: incident.title,
        category: incident.category,
        severity: incident.severity,
        now: incident.now,
        details: JSON.stringify(incident.details ?? {}),
      })!;
    return this.get(row.id);
  }

  /** A further signal joined the incident; what it said (a check's output, a log line) becomes the incident's latest output. */
  touch(id: number, update: { now: number; severity: string; pattern: string; title: string; output?: string }): void {
    const output = update.output === undefined ? null : latestOutput(update.output);
    this.db.run(
      `UPDATE incidents SET last_seen = max(last_seen, ?), count = count + 1, severity = ?, pattern = ?, title = ?,
         details = CASE WHEN ? IS NULL THEN details ELSE json_set(details, '$.output', ?, '$.output_at', ?) END
       WHERE id = ?`,
      [update.now, update.severity, update.pattern, update.title, output, output, update.now, id],
    );
  }

  /**
   * An action was chosen. An alert does not replace a remedial action already taken (whose verdict
   * stays visible); the alert itself is in the details and the timeline.
   */
  recordDecision(id: number, decision: { tier: number; action: string; reason: string; confidence?: number }): void {
    const current = this.get(id);
    const details = {
      ...current.details,
      reason: decision.reason,
      ...(decision.confidence !== undefined ? { confidence: decision.confidence } : {}),
    };
    if (decision.action === "alert" && current.action !== null) {
      this.db.run("UPDATE incidents SET details = ? WHERE id = ?", [JSON.stringify(details), id]);
      return;
    }
    const verdict = decision.action === "alert" ? null : "pending";
    this.db.run("UPDATE incidents SET tier = ?, action = ?, verdict = ?, details = ? WHERE id = ?", [
      decision.tier,
      decision.action,
      verdict,
      JSON.stringify(details),
      id,
    ]);
  }

  setVerdict(id: number, verdict: Verdict): void {
    this.db.run("UPDATE incidents SET verdict = ? WHERE id = ?", [verdict, id]);
  }

  mergeDetails(id: number, patch: Record<string, unknown>): void {
    const current = this.get(id);
    this.db.run("UPDATE incidents SET details = ? WHERE id = ?", [JSON.stringify({ ...current.details, ...patch }), id]);
  }

  addEvent(id: number, kind: string, message: string, fields: Record<string, unknown> = {}, ts = Date.now()): void {
    if (!this.#hasTimeline) return;
    this.db.run("INSERT INTO incident_events (incident_id, ts, kind, message, fields) VALUES (?, ?, ?, ?, ?)", [
      id,
      ts,
      kind,
      message,
      JSON.stringify(fields),
    ]);
  }

  timeline(id: number): IncidentEvent[] {
    if (!this.#hasTimeline) return [];
    return this.db
      .query<EventRow, [number]>("SELECT * FROM incident_events WHERE incident_id = ? ORDER BY id")
      .all(id)
      .map((row) => ({ ...row, fields: JSON.parse(row.fields) as Record<string, unknown> }));
  }

  /** Keeps at most `max` incidents by deleting the oldest resolved ones; returns how many went. */
  prune(max: number): number {
    const excess = this.count() - max;
    if (excess <= 0) return 0;
    const ids = this.db
      .query<{ id: number }, [number]>("SELECT id FROM incidents WHERE state = 'resolved' ORDER BY last_seen ASC, id ASC LIMIT ?")
      .all(excess)
      .map((r) => r.id);
    for (const id of ids) this.db.run("DELETE FROM incidents WHERE id = ?", [id]);
    return ids.length;
  }
}
