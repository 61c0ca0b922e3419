export { runCommand } from "./runCommand.ts";
export type { CommandResult, RunCommandOptions } from "./runCommand.ts";
export { raceTimeout } from "./raceTimeout.ts";
export { runInBackground } from "./background.ts";
export type { BackgroundTask } from "./background.ts";
export { installProcessErrorHandlers } from "./processErrorHandlers.ts";
export { failureCount } from "./failureCounters.ts";
export { hardenProcess, withUmask, OPERATOR_UMASK_ENV } from "./processHardening.ts";
export type { Hardening } from "./processHardening.ts";
