import type { Database } from "bun:sqlite";
import type { TrackedState } from "./trackedIncident.ts";

/** The working state of unresolved incidents (signals seen, actions tried, a verification under way), kept across restarts. */
export class IncidentStateStore {
  constructor(private readonly db: Database) {}

  load(incidentId: number): TrackedState | undefined {
    const row = this.db
      .query<{ state: string }, [number]>("SELECT state FROM watchdog_incident_state WHERE incident_id = ?")
      .get(incidentId);
    return row ? (JSON.parse(row.state) as TrackedState) : undefined;
  }

  save(incidentId: number, state: string, now: number): void {
    this.db.run(
      `INSERT INTO watchdog_incident_state (incident_id, state, updated_at) VALUES (?, ?, ?)
       ON CONFLICT(incident_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
      [incidentId, state, now],
    );
  }

  delete(incidentId: number): void {
    this.db.run("DELETE FROM watchdog_incident_state WHERE incident_id = ?", [incidentId]);
  }
}
