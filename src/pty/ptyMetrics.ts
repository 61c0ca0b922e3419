import type { MetricFamily } from "../core/metrics/index.ts";
import type { PtySessionInfo } from "./ptySchemas.ts";

/** PTY sessions held, and how many of them still run a program (the manager's own list, in memory). */
export function ptyMetricFamilies(sessions: readonly PtySessionInfo[]): MetricFamily[] {
  return [
    {
      name: "agentd_pty_sessions_open",
      help: "PTY sessions held by the worker, running or exited (not yet closed).",
      type: "gauge",
      samples: [{ value: sessions.length }],
    },
    {
      name: "agentd_pty_sessions_running",
      help: "PTY sessions whose program still runs.",
      type: "gauge",
      samples: [{ value: sessions.filter((s) => s.running).length }],
    },
  ];
}
