import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../support/binary.ts";

export const RULES_DIR = join(PROJECT_ROOT, "deploy", "prometheus");
export const DASHBOARD = join(PROJECT_ROOT, "deploy", "grafana", "agentd.json");

export interface Panel {
  title: string;
  type?: string;
  fieldConfig?: { defaults?: { unit?: string }; overrides?: Array<{ properties?: Array<{ id: string }> }> };
  targets: Array<{ expr: string; legendFormat?: string }>;
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

/** What a series measures, read from its PromQL: the unit its axis must have. */
export type SeriesKind = "seconds" | "bytes" | "state" | "rate" | "ratio" | "count";

/** Grafana units each kind may be drawn with; a rate may also name its thing (`suffix: tokens/s`). */
export const UNITS: Record<SeriesKind, readonly string[]> = {
  seconds: ["s"],
  bytes: ["bytes"],
  // 0/1 gauges (one per state) read as yes/no; a panel mapping values to words uses "none".
  state: ["bool_yes_no", "bool_on_off", "none"],
  rate: ["ops", "reqps"],
  ratio: ["percentunit"],
  count: ["short", "none"],
};

const STATE_GAUGE = /(^up$|^agentd_verdict$|_state$|_writable$|_silenced$)/;

/** The kind of one target's series: a division of rates is a ratio, rate() a rate, increase() a count, else the metric's own suffix. */
export function seriesKind(expr: string): SeriesKind {
  const names = metricNames(expr);
  if (/\)\s*\/\s*(sum|rate|\()/.test(expr) && /\brate\(/.test(expr)) return "ratio";
  if (names.some((name) => /_seconds(_bucket)?$/.test(name)))
    return /\brate\(/.test(expr) && !/histogram_quantile/.test(expr) ? "rate" : "seconds";
  if (names.some((name) => /_bytes(_bucket)?$/.test(name)))
    return /\brate\(/.test(expr) && !/histogram_quantile/.test(expr) ? "rate" : "bytes";
  if (/\b(rate|irate)\(/.test(expr)) return "rate";
  if (/\bincrease\(/.test(expr)) return "count";
  if (names.length > 0 && names.every((name) => STATE_GAUGE.test(name))) return "state";
  return "count";
}

/** Why a panel breaks "one unit per axis": its series of different kinds, or a unit that does not fit them. */
export function unitProblems(panel: Panel): string[] {
  const problems: string[] = [];
  const kinds = [...new Set(panel.targets.map((target) => seriesKind(target.expr)))];
  if (kinds.length > 1) problems.push(`${panel.title}: series of different units on one axis (${kinds.join(", ")})`);
  const unit = panel.fieldConfig?.defaults?.unit;
  const kind = kinds[0];
  if (kind && kinds.length === 1) {
    const fits = UNITS[kind].includes(unit ?? "") || (kind === "rate" && /^suffix: ?\S.*\/s$/.test(unit ?? ""));
    if (!fits) problems.push(`${panel.title}: unit ${unit ?? "(none)"} for ${kind} series (expected ${UNITS[kind].join(" or ")})`);
  }
  for (const override of panel.fieldConfig?.overrides ?? [])
    if (override.properties?.some((property) => property.id === "unit")) problems.push(`${panel.title}: an override sets a second unit`);
  return problems;
}

/**
 * Why a panel's legends cannot tell hosts apart: a legend without {{instance}}, or an aggregation
 * that drops the instance label (a `by` without it, `without`, or none at all).
 */
export function legendProblems(panel: Panel): string[] {
  const problems: string[] = [];
  for (const target of panel.targets) {
    if (!target.legendFormat?.includes("{{instance}}"))
      problems.push(`${panel.title}: legend "${target.legendFormat ?? ""}" lacks {{instance}}`);
    const expr = target.expr.replace(/"[^"]*"/g, '""');
    for (const match of expr.matchAll(
      /\b(sum|avg|min|max|count|topk|bottomk|quantile|stddev)\s*(by\s*\(([^)]*)\)|without\s*\([^)]*\))?\s*\(/g,
    )) {
      const labels = match[3]?.split(",").map((label) => label.trim());
      if (!labels?.includes("instance")) problems.push(`${panel.title}: ${match[0]}…) drops the instance label`);
    }
  }
  return problems;
}
