export { createLogger, setLogLevel, setLogSink, isLogLevel, parseLogLine, formatLogLine, LOG_LEVELS } from "./logger.ts";
export type { Logger, LogLevel, LogFields, LogRecord, LogSink } from "./logger.ts";
export { RotatingFile } from "./rotatingFile.ts";
export { eachLine, lineBetween, readLineBlocks, readLines } from "./lineReader.ts";
export { formatForOutput, formatHumanRecord, resolveLogFormat, LOG_FORMATS } from "./humanLog.ts";
export type { LogFormat } from "./humanLog.ts";
