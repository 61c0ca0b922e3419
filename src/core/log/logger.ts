import { writeSync } from "node:fs";
import { LineBatcher } from "./lineBatcher.ts";

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

/** Receives each formatted line; `level` lets a batching sink send warnings and errors promptly. */
export type LogSink = (line: string, level: LogLevel) => void;

interface LoggerState {
  level: LogLevel;
  sink: LogSink;
}

// Lines go out in batches (LineBatcher): at most one write per LOG_BATCH_MS, warnings and errors on
// the next turn. Every line is still written, in order; a SIGKILL can lose the last batch's lines.
// Each write wakes the supervisor, which then costs more than the lines it reads: at 50 ms rather
// than 10, a proxied request took 4-9 % less CPU at c=1 (bench/compare.ts, streamed and not).
const LOG_BATCH_MS = 50;
const writeStdout = (bytes: Uint8Array) => {
  try {
    // Synchronous: once a batch goes, no part of it waits in a userland buffer an abrupt exit would drop.
    const written = writeSync(1, bytes);
    // The rest waits in the stream: copied, as the batcher reuses its buffer.
    if (written < bytes.length) process.stdout.write(Buffer.from(bytes.subarray(written)));
  } catch (error) {
    // EPIPE: nobody reads stdout any more (the supervisor is gone); the lines have no reader.
    if ((error as NodeJS.ErrnoException).code !== "EPIPE") process.stdout.write(Buffer.from(bytes));
  }
};
const stdoutBatch = new LineBatcher({ write: writeStdout, intervalMs: LOG_BATCH_MS });
const batchedStdout: LogSink = (line, level) => stdoutBatch.add(line, level === "warn" || level === "error");
// A process that exits before the next write (process.exit, an uncaught error) still writes them.
process.on("exit", () => stdoutBatch.flush());

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

// A busy proxy writes several lines in the same millisecond: their timestamp is formatted once.
let stampedAt = Number.NaN;
let stamp = "";
function timestamp(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = new Date(now).toISOString();
  }
  return stamp;
}

export function createLogger(component: string): Logger {
  const write = (level: LogLevel, event: string, fields?: LogFields) => {
    if (LEVEL_RANK[level] < LEVEL_RANK[state.level]) return;
    const record: LogRecord = { ts: timestamp(), level, component, event };
    let flat = true;
    // A field named like a fixed key ("component", "event") must not rewrite it.
    if (fields)
      for (const key in fields)
        if (!Object.hasOwn(record, key)) {
          const value = fields[key];
          record[key] = value;
          if (value !== null && typeof value === "object") flat = false;
        }
    // Only an object can hold an Error: a record of plain values skips the replacer (the hot proxy.request line).
    state.sink(flat ? JSON.stringify(record) : formatLogLine(record), level);
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
