/** Small value formatters shared by the text and HTML views (pure; time is passed in). */

export function formatUptime(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d${Math.floor((s % 86400) / 3600)}h`;
}

/** "12s ago", "3m ago", "-" for no time; a time in the future (clock skew) reads "now". */
export function formatAge(at: number | null | undefined, now: number): string {
  if (at === null || at === undefined) return "-";
  return `${formatUptime(Math.max(0, now - at) / 1000)} ago`;
}

/** "2024-05-01 12:03:04Z": UTC, second precision, sorts as text. */
export function formatTime(at: number | null | undefined): string {
  if (at === null || at === undefined || !Number.isFinite(at)) return "-";
  return `${new Date(at).toISOString().slice(0, 19).replace("T", " ")}Z`;
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "-";
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms)}ms`;
}

/**
 * Makes a value from logs, commands or model output safe for one terminal cell: no line breaks,
 * no escape sequences (a stray ESC would recolour or move the operator's terminal).
 */
export function oneLine(text: string): string {
  return text.replace(/[\t\r\n]+/g, " ").replace(/[\u0000-\u001f\u007f-\u009f]/g, "\uFFFD");
}

/** Cuts to `width` characters (code points), marking the cut with "…". */
export function truncate(text: string, width: number): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  return width <= 0 ? "" : `${chars.slice(0, width - 1).join("")}…`;
}

export function textWidth(text: string): number {
  return [...text].length;
}

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}
