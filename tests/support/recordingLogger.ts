import type { Logger } from "../../src/core/log/index.ts";

export interface LoggedLine {
  level: "debug" | "info" | "warn" | "error";
  event: string;
  fields: Record<string, unknown>;
}

/** A Logger that keeps its lines in `lines` instead of writing them, so a test can read what was logged. */
export function recordingLogger(lines: LoggedLine[] = []): Logger & { lines: LoggedLine[] } {
  const at =
    (level: LoggedLine["level"]) =>
    (event: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, event, fields });
  const logger = { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), child: () => logger };
  return logger;
}
