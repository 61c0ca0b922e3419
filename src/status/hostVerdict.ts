import type { HealthStatus } from "../core/health/index.ts";

/** The host's one answer to "is everything fine?": the page's banner, its title, /badge.svg and `agentd status`'s exit code. */
export interface HostVerdict {
  status: HealthStatus;
  /** The first of `reasons`, or what "pass" means. */
  reason: string;
  /** Every reason, the worst first. */
  reasons: string[];
}

export interface VerdictInput {
  checks: ReadonlyArray<{ name: string; state: string; severity?: string }>;
  /** Open incidents per severity, each with its most recent title. */
  openIncidents: ReadonlyArray<{ severity: string; count: number; title: string }>;
  /** Approvals of every kind (agent tool calls, watchdog commands) waiting for a person. */
  pendingApprovals: number;
  /** agentd's own /health checks: one failing fails the host too (a store that refuses writes loses incidents). */
  health?: ReadonlyArray<{ key: string; status: HealthStatus }>;
  /** What fails under an agentd silence (left out of `checks` and `openIncidents`): named, and warn at most. */
  silenced?: readonly string[];
}

/** /health's view of the watchdog, already counted here from the checks and incidents themselves. */
const MIRRORED = new Set(["watchdog:checks", "incidents:open"]);

export const ALL_CLEAR = "all checks pass, no open incident, nothing waits for approval";

function incidentReason(severity: string, entry: { count: number; title: string } | undefined): string | undefined {
  if (!entry || entry.count === 0) return undefined;
  const more = entry.count > 1 ? ` (and ${entry.count - 1} more)` : "";
  return `${severity} incident open: ${entry.title}${more}`;
}

/**
 * `fail` when a critical incident is open or a critical check fails; `warn` when any check fails,
 * an error incident is open, something fails under a silence or an approval waits; else `pass`. Pure.
 */
export function hostVerdict(input: VerdictInput): HostVerdict {
  const failing = input.checks.filter((check) => check.state === "fail");
  const critical = failing.filter((check) => check.severity === "critical").map((check) => check.name);
  const other = failing.filter((check) => check.severity !== "critical").map((check) => check.name);
  const bySeverity = new Map(input.openIncidents.map((entry) => [entry.severity, entry]));
  const own = (input.health ?? []).filter((check) => !MIRRORED.has(check.key));
  const ownWith = (status: HealthStatus) =>
    own
      .filter((check) => check.status === status)
      .map((check) => check.key)
      .join(", ");
  const failReasons = [
    ownWith("fail") ? `agentd check failing: ${ownWith("fail")}` : undefined,
    incidentReason("critical", bySeverity.get("critical")),
    critical.length ? `critical check failing: ${critical.join(", ")}` : undefined,
  ].filter((reason): reason is string => reason !== undefined);
  const warnReasons = [
    ownWith("warn") ? `agentd check warning: ${ownWith("warn")}` : undefined,
    other.length ? `check failing: ${other.join(", ")}` : undefined,
    incidentReason("error", bySeverity.get("error")),
    input.silenced?.length ? `silenced while failing: ${input.silenced.join(", ")}` : undefined,
    input.pendingApprovals > 0 ? `${input.pendingApprovals} approval${input.pendingApprovals === 1 ? "" : "s"} waiting` : undefined,
  ].filter((reason): reason is string => reason !== undefined);
  const reasons = [...failReasons, ...warnReasons];
  const status: HealthStatus = failReasons.length ? "fail" : warnReasons.length ? "warn" : "pass";
  return { status, reason: reasons[0] ?? ALL_CLEAR, reasons };
}

/**
 * `agentd status`'s exit code from the page it printed: 1 when the verdict is `fail`, else 0
 * (2, unreachable, is the caller's). Reads the JSON's `verdict` (documents before schema 2 carried
 * only `health`) or the text view's first line.
 */
export function verdictExitCode(body: string, json: boolean): 0 | 1 {
  if (!json) return / status FAIL /.test(body.split("\n")[0] ?? "") ? 1 : 0;
  const document = JSON.parse(body) as { verdict?: { status?: string }; health?: { status?: string } };
  return (document.verdict?.status ?? document.health?.status) === "fail" ? 1 : 0;
}
