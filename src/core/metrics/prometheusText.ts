export type MetricType = "counter" | "gauge" | "summary" | "histogram";

export interface MetricSample {
  labels?: Record<string, string | number>;
  value: number;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  samples: MetricSample[];
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

/** Renders metric families in the Prometheus text exposition format (version 0.0.4). */
export function renderPrometheus(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${family.help}`, `# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) {
      const labels = Object.entries(sample.labels ?? {});
      const labelText = labels.length ? `{${labels.map(([k, v]) => `${k}="${escapeLabel(String(v))}"`).join(",")}}` : "";
      lines.push(`${family.name}${labelText} ${Number.isFinite(sample.value) ? sample.value : 0}`);
    }
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
}
