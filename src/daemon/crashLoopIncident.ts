import type { Database } from "../store/index.ts";

/** The supervisor's own incident when it gives up; the watchdog's incident store reads the same table. */
export function recordCrashLoop(db: Database, reason: string): void {
  const now = Date.now();
  db.run(
    `INSERT INTO incidents (dedup_key, title, category, severity, state, first_seen, last_seen, count, tier, action, details)
     VALUES (?, 'Worker crash loop', 'daemon', 'critical', 'open', ?, ?, 1, 1, 'alert', ?)`,
    [`crash_loop:${now}`, now, now, JSON.stringify({ signal: "crash_loop", reason })],
  );
}
