import type { Database } from "bun:sqlite";
import { AgentdError } from "../errors/index.ts";

export type IncidentState = "open" | "acknowledged" | "resolved";

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
}

type IncidentRow = Omit<Incident, "details"> & { details: string };

export interface IncidentListOptions {
  state?: IncidentState | "unresolved";
  limit?: number;
  offset?: number;
}

export class IncidentNotFoundError extends AgentdError {
  constructor(id: number) {
    super("incident_not_found", `No incident with id ${id}`, { status: 404 });
  }
}

function toIncident(row: IncidentRow): Incident {
  return { ...row, details: JSON.parse(row.details) as Record<string, unknown> };
}

/** Incidents in the shared store: read by the page and the CLI, written by the watchdog. */
export class IncidentStore {
  constructor(private readonly db: Database) {}

  list(options: IncidentListOptions = {}): Incident[] {
    const where = options.state === "unresolved" ? "WHERE state != 'resolved'" : options.state ? "WHERE state = $state" : "";
    const rows = this.db
      .query<IncidentRow, Record<string, string | number>>(`SELECT * FROM incidents ${where} ORDER BY last_seen DESC, id DESC LIMIT $limit OFFSET $offset`)
      .all({ ...(options.state && options.state !== "unresolved" ? { state: options.state } : {}), limit: options.limit ?? 50, offset: options.offset ?? 0 });
    return rows.map(toIncident);
  }

  count(state?: IncidentState | "unresolved"): number {
    const where = state === "unresolved" ? "WHERE state != 'resolved'" : state ? "WHERE state = ?" : "";
    const params = state && state !== "unresolved" ? [state] : [];
    return this.db.query<{ n: number }, string[]>(`SELECT count(*) AS n FROM incidents ${where}`).get(...params)?.n ?? 0;
  }

  get(id: number): Incident {
    const row = this.db.query<IncidentRow, [number]>("SELECT * FROM incidents WHERE id = ?").get(id);
    if (!row) throw new IncidentNotFoundError(id);
    return toIncident(row);
  }

  /** Moves an incident forward (open → acknowledged → resolved); `by` says who (api, page, cli, watchdog). */
  setState(id: number, state: "acknowledged" | "resolved", by: string): Incident {
    const current = this.get(id);
    if (current.state === "resolved" || (current.state === "acknowledged" && state === "acknowledged")) return current;
    const details = { ...current.details, [`${state}_by`]: by, [`${state}_at`]: Date.now() };
    this.db.run("UPDATE incidents SET state = ?, details = ? WHERE id = ?", [state, JSON.stringify(details), id]);
    return this.get(id);
  }
}
