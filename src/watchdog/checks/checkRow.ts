/** One check as the status page shows it (stored in kv `watchdog.checks` by the supervisor). */
export interface CheckRow {
  name: string;
  kind: string;
  /** The check's configured severity (rows stored before it existed have none: read as "error"). */
  severity?: string;
  state: "pass" | "fail" | "unknown";
  last_change: number | null;
  output?: string;
  flapping?: boolean;
  /** When the check's current failing episode began (null while it passes). */
  failing_since?: number | null;
}
