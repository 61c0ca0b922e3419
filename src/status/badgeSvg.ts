import type { HealthDocument, HealthStatus } from "../core/health/index.ts";
import { worstStatus } from "../core/health/index.ts";
import { escapeHtml } from "./escapeHtml.ts";

export type BadgeTone = HealthStatus | "unknown";

const COLORS: Record<BadgeTone, string> = { pass: "#2e7d32", warn: "#b26a00", fail: "#c62828", unknown: "#757575" };

/** Verdana 11px averages about 7 px a character; close enough that text never overflows its box. */
function textWidth(text: string): number {
  return Math.round([...text].length * 7 + 10);
}

/** A flat two-part badge (label | message) like the ones READMEs show, as standalone SVG. */
export function renderBadge(label: string, message: string, tone: BadgeTone): string {
  const labelWidth = textWidth(label);
  const messageWidth = textWidth(message);
  const width = labelWidth + messageWidth;
  const title = escapeHtml(`${label}: ${message}`);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="20" role="img" aria-label="${title}"><title>${title}</title>` +
    `<clipPath id="r"><rect width="${width}" height="20" rx="3" fill="#fff"/></clipPath>` +
    `<g clip-path="url(#r)"><rect width="${labelWidth}" height="20" fill="#555"/><rect x="${labelWidth}" width="${messageWidth}" height="20" fill="${COLORS[tone]}"/></g>` +
    `<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">` +
    `<text x="${labelWidth / 2}" y="14">${escapeHtml(label)}</text><text x="${labelWidth + messageWidth / 2}" y="14">${escapeHtml(message)}</text></g></svg>`
  );
}

/**
 * The state of one check for /badge/<name>.svg: an exact key (`store:writable`) or a component
 * (`store`: the worst of its checks). undefined when nothing matches.
 */
export function checkBadgeStatus(health: HealthDocument, name: string): HealthStatus | undefined {
  // Own keys only: "constructor" or "__proto__" must not find the prototype's.
  const exact = Object.hasOwn(health.checks, name) ? health.checks[name] : undefined;
  const entries = exact ?? Object.entries(health.checks).flatMap(([key, list]) => (key.startsWith(`${name}:`) ? list : []));
  return entries.length === 0 ? undefined : worstStatus(entries.map((check) => check.status));
}
