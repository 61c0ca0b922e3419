import type { StatusSnapshot } from "./statusSnapshot.ts";

function formatUptime(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h${Math.floor((seconds % 3600) / 60)}m`;
  return `${Math.floor(seconds / 86400)}d${Math.floor((seconds % 86400) / 3600)}h`;
}

export { formatUptime };

/** The curl view: aligned plain text, no ANSI, ≤ 100 columns, ending in a newline. */
export function renderStatusText(snapshot: StatusSnapshot): string {
  const { health, worker } = snapshot;
  const lines = [
    `agentd ${worker.version}  status ${health.status.toUpperCase()}  up ${formatUptime(worker.uptime_s)}`,
    "",
    "WORKER",
    `  pid ${worker.pid}  supervisor ${worker.supervisor_pid ?? "-"}  restarts ${worker.restarts}  memory ${worker.memory_mb} MB`,
    "",
    "CHECKS",
  ];
  const entries = Object.entries(health.checks).flatMap(([key, list]) => list.map((check) => ({ key, ...check })));
  const width = Math.min(40, Math.max(8, ...entries.map((e) => e.key.length)));
  for (const check of entries) {
    const value = check.observedValue === undefined ? "" : `${check.observedValue}${check.observedUnit ? " " + check.observedUnit : ""}`;
    const output = check.output ? `  ${check.output}` : "";
    lines.push(`  ${check.key.padEnd(width)}  ${check.status.padEnd(4)}  ${value}${output}`.trimEnd());
  }
  if (entries.length === 0) lines.push("  (none)");
  if (health.notes.length) lines.push("", "NOTES", ...health.notes.map((note) => `  ${note}`));
  return lines.map((line) => (line.length > 100 ? line.slice(0, 99) + "…" : line)).join("\n") + "\n";
}
