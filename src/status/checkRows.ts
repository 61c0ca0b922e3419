import { silenceTargetsOf, type Silence } from "../watchdog/index.ts";
import type { CheckResult } from "./checkHistory.ts";
import type { WatchdogCheckRow } from "./statusSnapshot.ts";

const STATE_ORDER: Record<string, number> = { fail: 0, warn: 1, unknown: 2, pass: 3 };
const SEVERITY_ORDER: Record<string, number> = { critical: 0, error: 1, warning: 2, info: 3 };

/** When the silences in force that cover this check end (the latest), or undefined when none does. */
export function silencedUntil(check: { name: string; kind: string }, silences: readonly Silence[]): number | undefined {
  const targets = silenceTargetsOf(`check.${check.kind}`, `check:${check.name}`);
  const covering = silences.filter((silence) => targets.includes(silence.target));
  return covering.length === 0 ? undefined : Math.max(...covering.map((silence) => silence.until));
}

/**
 * The checks as the page lists them: failing first (critical before the rest), then by name; each
 * with the silence that covers it and its recent results. Pure.
 */
export function checkRowsForPage(
  checks: readonly WatchdogCheckRow[],
  silences: readonly Silence[],
  history: ReadonlyMap<string, CheckResult[]>,
): WatchdogCheckRow[] {
  return checks
    .map((check) => {
      const until = silencedUntil(check, silences);
      const results = history.get(check.name);
      return { ...check, ...(until !== undefined ? { silenced_until: until } : {}), ...(results ? { history: results } : {}) };
    })
    .sort(
      (a, b) =>
        (STATE_ORDER[a.state] ?? 2) - (STATE_ORDER[b.state] ?? 2) ||
        (SEVERITY_ORDER[a.severity ?? "error"] ?? 1) - (SEVERITY_ORDER[b.severity ?? "error"] ?? 1) ||
        a.name.localeCompare(b.name),
    );
}
