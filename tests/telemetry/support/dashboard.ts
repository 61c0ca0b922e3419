import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../support/binary.ts";

export const RULES_DIR = join(PROJECT_ROOT, "deploy", "prometheus");
export const DASHBOARD = join(PROJECT_ROOT, "deploy", "grafana", "agentd.json");

interface Panel {
  title: string;
  targets: Array<{ expr: string }>;
}

export function dashboardPanels(): Panel[] {
  return (JSON.parse(readFileSync(DASHBOARD, "utf8")) as { panels: Panel[] }).panels;
}

const FUNCTIONS = new Set(["sum", "rate", "increase", "histogram_quantile", "by", "without", "avg", "max", "min", "count", "label_values"]);

/** The metric names a PromQL expression reads: identifiers followed by `{`, `[` or `)`, minus functions and labels. */
export function metricNames(expr: string): string[] {
  const withoutStrings = expr.replace(/"[^"]*"/g, '""');
  const withoutGroupings = withoutStrings.replace(/\b(by|without)\s*\([^)]*\)/g, "");
  const names = withoutGroupings.match(/[a-zA-Z_:][a-zA-Z0-9_:]*(?=\s*[{[)]|\s*$)/g) ?? [];
  return [...new Set(names.filter((name) => !FUNCTIONS.has(name)))];
}

/** Families a /metrics text declares, with each histogram's `_bucket`, `_sum` and `_count` series. */
export function declaredNames(metrics: string): Set<string> {
  const names = new Set<string>();
  for (const match of metrics.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(match[1]!);
    if (match[2] === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) names.add(match[1]! + suffix);
  }
  return names;
}
