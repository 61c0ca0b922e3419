import { VERSION } from "../version.ts";
import { parseLogLine, type LogRecord } from "./logger.ts";

export type LogFormat = "json" | "human";
export const LOG_FORMATS: readonly string[] = ["json", "human", "auto"];

const FIXED = new Set(["ts", "level", "component", "event"]);
// A log line carries what the daemon saw (a model's command, an upstream's error text): shown on a
// terminal, a control sequence in it would act on the operator's terminal.
const CONTROL = /[\x00-\x1f\x7f-\x9f]/g;

function value(field: unknown): string {
  const text = typeof field === "string" ? field : JSON.stringify(field, (_k, v) => (v instanceof Error ? v.message : v));
  const plain = typeof field !== "string" || /^[^\s"=]+$/.test(text);
  const shown = plain ? (text ?? "") : JSON.stringify(text);
  return shown.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** One record as a person reads it: `12:03:04 WARN  proxy  upstream.error  provider=openai status=502`. */
export function formatHumanRecord(record: LogRecord): string {
  if (record.event === "http.listening" && typeof record.url === "string")
    return `agentd ${VERSION} listening on ${record.url}, status at ${record.url}/status`;
  const time = typeof record.ts === "string" ? record.ts.slice(11, 19) : "";
  const fields = Object.keys(record)
    .filter((key) => !FIXED.has(key))
    .map((key) => `${key}=${value(record[key])}`);
  return [time, record.level.toUpperCase().padEnd(5), value(record.component), value(record.event), ...fields].join(" ");
}

/** A line from a logger in the chosen form; anything else (a child's stray output) as it came, made safe. */
export function formatForOutput(line: string, format: LogFormat): string {
  if (format === "json") return line;
  const record = parseLogLine(line);
  return record ? formatHumanRecord(record) : line.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** `auto`: human on a terminal, JSON for a pipe, a file or journald (whose readers parse it). */
export function resolveLogFormat(asked: string | undefined, isTerminal: boolean): LogFormat {
  if (asked === "json" || asked === "human") return asked;
  return isTerminal ? "human" : "json";
}
