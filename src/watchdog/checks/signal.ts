import type { ActionName, Severity, SignalCategory } from "../../core/config/sections/watchdogConfig.ts";

/** One observation the watchdog reacts to: a matched log line, a probe failure, a worker exit, a failing check. */
export interface Signal {
  /** Signature id (`upstream.server_error`) or a built-in source id (`worker.crashed`, `check.<name>`). */
  id: string;
  title: string;
  category: SignalCategory;
  severity: Severity;
  /** What failed, for grouping: `worker`, `provider:openai`, `check:db`. */
  component: string;
  ts: number;
  /** Fields worth keeping: provider, status, cause, pid… */
  fields: Record<string, string | number | boolean>;
  /** The redacted source line, when the signal came from a log. */
  line?: string;
}

/** What a tier decided for an incident. */
export interface Decision {
  tier: 1 | 2 | 3;
  action: ActionName;
  reason: string;
  ruleId?: string;
  command?: string;
  confidence?: number;
}

const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, error: 2, critical: 3 };

export function severityAtLeast(severity: Severity, floor: Severity): boolean {
  return SEVERITY_RANK[severity] >= SEVERITY_RANK[floor];
}

export function worseSeverity(a: Severity, b: Severity): Severity {
  return SEVERITY_RANK[a] >= SEVERITY_RANK[b] ? a : b;
}
