export { runCommand, runConfinedCommandsWith } from "./runCommand.ts";
export type { CommandResult, RunCommandOptions } from "./runCommand.ts";
export { raceTimeout } from "./raceTimeout.ts";
export { runInBackground } from "./background.ts";
export type { BackgroundTask } from "./background.ts";
export { installProcessErrorHandlers } from "./processErrorHandlers.ts";
export { failureCount } from "./failureCounters.ts";
export { hardenProcess, OPERATOR_UMASK_ENV } from "./processHardening.ts";
export type { Hardening } from "./processHardening.ts";
export { parseProcStat, readProcStat } from "./procStat.ts";
export type { ProcStat } from "./procStat.ts";
export { trackChild } from "./ownChildren.ts";
export { isCompiledBinary } from "./compiledBinary.ts";
export { confineOwnCommands, setprivPath } from "./confinement/ownCommands.ts";
export { CHILD_TMPDIR_ENV, looksSecret, withholdSecretValues, withoutSecrets } from "./confinement/secretEnv.ts";
export type { SecretEnvOptions } from "./confinement/secretEnv.ts";
export { errnoName, namespaceSandboxAvailable, nativeSpawn, SpawnError } from "./spawn/index.ts";
export type { NativeSpawnSpec, SpawnCredentials, SpawnLimit, SpawnSandbox } from "./spawn/index.ts";
export {
  DEFAULT_COMMAND_USER,
  DEFAULT_WORKER_USER,
  groupsOf,
  parseGroups,
  parsePasswd,
  resolveCommandIdentity,
  resolveWorkerAccount,
} from "./identity/index.ts";
export type { Account, CommandIdentity, GateMode, OwnPaths, RunAs, WorkerAccount } from "./identity/index.ts";
export * from "./cgroups/index.ts";
export { userTaskCount } from "./userTasks.ts";
export { scheduleCodeRelease } from "./codeRelease.ts";
