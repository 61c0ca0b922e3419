import type { Signal } from "./signal.ts";

/** Severities any program writes, in words or in a JSON line's level: a failure no signature knows yet. */
const GENERIC_SEVERITY =
  /\b(ERROR|FATAL|CRITICAL)\b|\bpanic:|\bTraceback \(most recent call last\)|"level"\s*:\s*"(error|fatal|critical)"/i;
/** Upper case words only (`ERROR`), so "0 errors" or "error_rate" in an ordinary line do not count. */
const WORD_SEVERITY = /\b(ERROR|FATAL|CRITICAL)\b/;

export const UNKNOWN_ERROR_SIGNAL = "log.unknown_error";

/** A line carries a generic error severity. */
export function hasGenericSeverity(line: string): boolean {
  const match = GENERIC_SEVERITY.exec(line);
  if (!match) return false;
  return match[1] === undefined || WORD_SEVERITY.test(line);
}

/**
 * What stays of an error line once what changes between occurrences is gone (uuids, hex, paths,
 * numbers, so timestamps, pids and ports too): lines of one failure share it.
 */
export function normaliseErrorText(line: string): string {
  return line
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<uuid>")
    .replace(/\b0x[0-9a-f]+\b/gi, "<hex>")
    .replace(/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi, "<hex>")
    .replace(/(?:\/[\w.@+~-]+)+\/?/g, "<path>")
    .replace(/\d+(?:[.,:]\d+)*/g, "<n>")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 200);
}

/** FNV-1a, 32 bits: a short stable name for a normalised text. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, "0");
}

/**
 * A low-severity signal for an error line no signature matched in a watched log, grouped (by its
 * component) with the lines that normalise to the same text.
 */
export function unknownErrorSignal(line: string, file: string, ts: number): Signal | undefined {
  if (!hasGenericSeverity(line)) return undefined;
  const text = normaliseErrorText(line);
  return {
    id: UNKNOWN_ERROR_SIGNAL,
    title: `Unknown error in ${file}: ${text.slice(0, 120)}`,
    category: "daemon",
    severity: "warning",
    component: `log:${file}#${shortHash(text)}`,
    ts,
    fields: { file, pattern: text },
    line,
  };
}
