import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadConfig, resolveDataDir } from "../../core/config/index.ts";
import { formatHumanRecord } from "../../core/log/humanLog.ts";
import { isLogLevel, LOG_LEVELS, parseLogLine, type LogLevel, type LogRecord } from "../../core/log/logger.ts";
import { parseDuration, UsageError, type Command } from "../command.ts";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
/** Rotations the supervisor may keep (config log.file_keep is at most 100). */
const MAX_ROTATIONS = 100;
const FOLLOW_POLL_MS = 250;

interface Filter {
  level?: LogLevel;
  sinceMs?: number;
  json: boolean;
}

function shown(line: string, filter: Filter): string | undefined {
  const record = parseLogLine(line);
  if (!record) return filter.level || filter.sinceMs !== undefined ? undefined : `${line}\n`;
  if (filter.level && RANK[record.level] < RANK[filter.level]) return undefined;
  if (filter.sinceMs !== undefined && Date.parse(record.ts) < filter.sinceMs) return undefined;
  return `${filter.json ? line : formatHumanRecord(record as LogRecord)}\n`;
}

function readFrom(path: string, offset: number): { text: string; end: number } {
  const fd = openSync(path, "r");
  try {
    const size = statSync(path).size;
    const buffer = Buffer.alloc(Math.max(0, size - offset));
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, offset + read);
      if (n === 0) break;
      read += n;
    }
    return { text: buffer.subarray(0, read).toString("utf8"), end: offset + read };
  } finally {
    closeSync(fd);
  }
}

/** Prints the complete lines of text; returns the bytes of a trailing partial line, read again next time. */
function printLines(text: string, filter: Filter): number {
  const lastNewline = text.lastIndexOf("\n");
  for (const line of text.slice(0, lastNewline + 1).split("\n")) {
    if (!line) continue;
    const out = shown(line, filter);
    if (out) process.stdout.write(out);
  }
  return Buffer.byteLength(text.slice(lastNewline + 1));
}

async function follow(path: string, from: number, filter: Filter): Promise<number> {
  let offset = from;
  let inode = existsSync(path) ? statSync(path).ino : 0;
  const stop = new Promise<void>((resolve) => process.once("SIGINT", () => resolve()));
  let stopped = false;
  stop.then(() => (stopped = true)).catch(() => undefined);
  while (!stopped) {
    await Promise.race([Bun.sleep(FOLLOW_POLL_MS), stop]);
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    // Rotated (a new file) or cut: start at the new file's beginning.
    if (stat.ino !== inode || stat.size < offset) {
      inode = stat.ino;
      offset = 0;
    }
    if (stat.size === offset) continue;
    const { text, end } = readFrom(path, offset);
    offset = end - printLines(text, filter);
  }
  return 0;
}

export const logsCommand: Command = {
  path: ["logs"],
  summary: "Print the daemon's log (<data_dir>/logs), as readable lines or JSON; -f follows it.",
  usage: "agentd logs [-f] [--since 10m] [--level warn] [--json] [--data-dir DIR]",
  options: {
    follow: { type: "boolean", short: "f" },
    since: { type: "string" },
    level: { type: "string" },
    json: { type: "boolean" },
    config: { type: "string", short: "c" },
    "data-dir": { type: "string" },
  },
  help: [
    "  -f, --follow          keep printing lines as they are written (Ctrl-C stops)",
    "      --since DURATION  only lines of the last DURATION (e.g. 10m, 2h)",
    `      --level LEVEL     only lines at LEVEL or above: ${LOG_LEVELS.join(" | ")}`,
    "      --json            print the JSON lines as written",
    "  -c, --config FILE     config file, to find the data directory",
    "      --data-dir DIR    data directory (default: AGENTD_DATA_DIR, config data_dir, ./.agentd)",
  ],
  async run({ values }) {
    const level = values.level as string | undefined;
    if (level !== undefined && !isLogLevel(level))
      throw new UsageError(`Cannot use "${level}" as --level: expected one of ${LOG_LEVELS.join(", ")}`);
    const filter: Filter = {
      level: level as LogLevel | undefined,
      sinceMs: values.since === undefined ? undefined : Date.now() - parseDuration(values.since as string),
      json: values.json === true,
    };
    const { config } = loadConfig({ explicitPath: values.config as string | undefined });
    const dataDir = resolveDataDir({ flag: values["data-dir"] as string | undefined, config });
    const path = join(dataDir, "logs", "agentd.log");
    if (!existsSync(path) && !values.follow) {
      process.stderr.write(`agentd logs: no log at ${path}: has agentd run with this data directory? (--data-dir DIR)\n`);
      return 1;
    }
    // Oldest rotation first, so lines come out in the order they were written.
    const rotations = Array.from({ length: MAX_ROTATIONS }, (_, i) => `${path}.${MAX_ROTATIONS - i}`).filter((file) => existsSync(file));
    for (const file of rotations) printLines(readFrom(file, 0).text, filter);
    let offset = 0;
    if (existsSync(path)) {
      const { text, end } = readFrom(path, 0);
      offset = end - printLines(text, filter);
    }
    return values.follow ? follow(path, offset, filter) : 0;
  },
};
