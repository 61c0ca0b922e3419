export { runCommand } from "./runCommand.ts";
export type { CommandResult, RunCommandOptions } from "./runCommand.ts";
export { raceTimeout } from "./raceTimeout.ts";
export { runInBackground } from "./background.ts";
export type { BackgroundTask } from "./background.ts";
export { installProcessErrorHandlers } from "./processErrorHandlers.ts";
export { failureCount } from "./failureCounters.ts";
export { parseProcStat, readProcStat } from "./procStat.ts";
export type { ProcStat } from "./procStat.ts";
