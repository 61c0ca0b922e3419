/** One record of the debug sidecar: what happened, when, for which session. */
export interface SidecarRecord {
  ts: string;
  session: string;
  kind: string;
  [field: string]: unknown;
}

export const SIDECAR_SEPARATOR = "# ----";

/**
 * A record as written to the file: one compact JSON line (machines read it), then the same
 * record indented as `# ` comment lines (people read it), then a separator.
 */
export function renderSidecarRecord(record: SidecarRecord): string {
  const compact = JSON.stringify(record);
  const pretty = JSON.stringify(record, null, 2).replaceAll("\n", "\n# ");
  return `${compact}\n# ${pretty}\n${SIDECAR_SEPARATOR}\n`;
}

/** The records of a sidecar text: its JSON lines; comment lines are the human rendering and skipped. */
export function parseSidecar(text: string): SidecarRecord[] {
  const records: SidecarRecord[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    records.push(JSON.parse(line) as SidecarRecord);
  }
  return records;
}

/** The human rendering of a sidecar text: the comment lines without their `# `, records apart. */
export function readableSidecar(text: string): string {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    if (line === SIDECAR_SEPARATOR) out.push("");
    else if (line.startsWith("# ")) out.push(line.slice(2));
  }
  return out.join("\n");
}
