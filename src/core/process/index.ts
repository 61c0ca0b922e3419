export { runCommand } from "./runCommand.ts";
export type { CommandResult, RunCommandOptions } from "./runCommand.ts";
export { raceTimeout } from "./raceTimeout.ts";
