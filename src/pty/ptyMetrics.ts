import { CounterFamily, familiesText } from "../core/metrics/index.ts";
import type { PtySessionInfo } from "./ptySchemas.ts";

/** PTY sessions held, and how many of them still run a program. */
export function ptyMetricsText(sessions: readonly PtySessionInfo[]): string {
  const open = new CounterFamily(
    "agentd_pty_sessions_open",
    "PTY sessions held by the worker, running or exited (not yet closed).",
    "gauge",
  );
  open.set("", sessions.length);
  const running = new CounterFamily("agentd_pty_sessions_running", "PTY sessions whose program still runs.", "gauge");
  running.set("", sessions.filter((s) => s.running).length);
  return familiesText([open, running]);
}
