import {
  checkLabelNames,
  checkMetricName,
  checkSampleShape,
  InvalidMetricFamilyError,
  type Labels,
  type MetricFamily,
} from "./metricFamily.ts";

/** HELP text escapes backslash and newline; label values escape the double quote too (exposition format 0.0.4). */
function escapeHelp(text: string): string {
  return /[\\\n]/.test(text) ? text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n") : text;
}

// Most values need nothing: testing first spares three replaces per value at every scrape.
function escapeLabelValue(value: string): string {
  return /[\\\n"]/.test(value) ? value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"') : value;
}

/**
 * Each label set's `{…}` text by object. Families keep their label objects from scrape to scrape,
 * so a set's names are checked and its values escaped once, not at every scrape.
 */
const labelTexts = new WeakMap<Labels, string>();

function labelText(family: string, labels: Labels): string {
  let text = labelTexts.get(labels);
  if (text !== undefined) return text;
  checkLabelNames(family, labels);
  text = "";
  for (const name in labels) text += `${text ? "," : ""}${name}="${escapeLabelValue(String(labels[name]))}"`;
  text = text ? `{${text}}` : "";
  labelTexts.set(labels, text);
  return text;
}

/**
 * Renders metric families in the Prometheus text exposition format (version 0.0.4): the only
 * writer of /metrics. Throws InvalidMetricFamilyError for a family the format cannot carry (a bad
 * name or label name, a misshapen histogram) or a name written twice.
 */
export function renderPrometheus(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const family of families) {
    checkMetricName(family.name);
    if (seen.has(family.name)) throw new InvalidMetricFamilyError(family.name, "written twice");
    seen.add(family.name);
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) {
      checkSampleShape(family, sample);
      const labels = sample.labels ? labelText(family.name, sample.labels) : "";
      lines.push(`${family.name}${sample.suffix ?? ""}${labels} ${Number.isFinite(sample.value) ? sample.value : 0}`);
    }
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
}
