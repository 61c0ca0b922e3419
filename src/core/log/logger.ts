import { writeSync } from "node:fs";

export type LogLevel = "debug" | "info" | "warn" | "error";

const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export const LOG_LEVELS = Object.keys(LEVEL_RANK) as LogLevel[];

export type LogFields = Record<string, unknown>;

/** One parsed log record, as written on one line. */
export interface LogRecord extends LogFields {
  ts: string;
  level: LogLevel;
  component: string;
  event: string;
}

export type LogSink = (line: string) => void;

interface LoggerState {
  level: LogLevel;
  sink: LogSink;
}

// Lines of one event-loop turn go out in one write: on a busy proxy a write per request line
// costs more than the request itself. Every line is still written, in order.
let pending = "";
const flushPending = () => {
  const bytes = Buffer.from(pending);
  pending = "";
  try {
    // Synchronous: nothing waits in a userland buffer that an abrupt exit would drop.
    const written = writeSync(1, bytes);
    if (written < bytes.length) process.stdout.write(bytes.subarray(written));
  } catch (error) {
    // EPIPE: nobody reads stdout any more (the supervisor is gone); the lines have no reader.
    if ((error as NodeJS.ErrnoException).code !== "EPIPE") process.stdout.write(bytes);
  }
};
const batchedStdout: LogSink = (line) => {
  if (pending === "") setImmediate(flushPending);
  pending += `${line}\n`;
};
// A process that exits before the next turn (process.exit, an uncaught error) still writes them.
process.on("exit", () => {
  if (pending) writeSync(1, pending);
});

// One process-wide state: every component's logger writes to the same sink at the same level.
const state: LoggerState = {
  level: "info",
  sink: batchedStdout,
};

export function setLogLevel(level: LogLevel): void {
  state.level = level;
}

export function setLogSink(sink: LogSink): void {
  state.sink = sink;
}

export function isLogLevel(value: string): value is LogLevel {
  return value in LEVEL_RANK;
}

export interface Logger {
  debug(event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
  child(component: string): Logger;
}

function serializeError(value: unknown): unknown {
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return code === undefined ? { name: value.name, message: value.message } : { name: value.name, message: value.message, code };
  }
  return value;
}

export function formatLogLine(record: LogRecord): string {
  return JSON.stringify(record, (_key, value) => serializeError(value));
}

export function createLogger(component: string): Logger {
  const write = (level: LogLevel, event: string, fields?: LogFields) => {
    if (LEVEL_RANK[level] < LEVEL_RANK[state.level]) return;
    const record: LogRecord = { ts: new Date().toISOString(), level, component, event };
    // A field named like a fixed key ("component", "event") must not rewrite it.
    if (fields) for (const key in fields) if (!Object.hasOwn(record, key)) record[key] = fields[key];
    state.sink(formatLogLine(record));
  };
  return {
    debug: (event, fields) => write("debug", event, fields),
    info: (event, fields) => write("info", event, fields),
    warn: (event, fields) => write("warn", event, fields),
    error: (event, fields) => write("error", event, fields),
    child: (sub) => createLogger(`${component}.${sub}`),
  };
}

/** Parses one line written by a logger; returns undefined for anything else (a child's stray output). */
export function parseLogLine(line: string): LogRecord | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(line) as Partial<LogRecord>;
    if (typeof value.event !== "string" || typeof value.component !== "string" || typeof value.level !== "string") return undefined;
    return value as LogRecord;
  } catch {
    return undefined;
  }
}
