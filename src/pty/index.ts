export { PtyManager } from "./ptyManager.ts";
export type { CommandLauncher, LaunchKind, LaunchRequest } from "./commandLauncher.ts";
export type { PtyManagerOptions } from "./ptyManager.ts";
export { createPtyTools } from "./ptyTools.ts";
export { createPtyRoutes } from "./ptyRoutes.ts";
export { createPtyCapability } from "./ptyCapability.ts";
export type { PtyCapability } from "./ptyCapability.ts";
export type { RemoteTerminals, TerminalTargets } from "./terminalTarget.ts";
export { renderOutput } from "./renderOutput.ts";
export { ptyConfigSchema } from "../core/config/sections/ptyConfig.ts";
export type { PtyConfig } from "../core/config/sections/ptyConfig.ts";
export { PtyError } from "./ptyErrors.ts";
export type { PtyErrorCode } from "./ptyErrors.ts";
export { execCommandArgs, writeStdinArgs, listSessionsArgs, closeSessionArgs } from "./ptySchemas.ts";
export type {
  ExecCommandArgs,
  WriteStdinArgs,
  CloseSessionArgs,
  PtyCommandResult,
  PtySessionInfo,
  PtyCloseResult,
} from "./ptySchemas.ts";
export { killOrphanedPtyGroups, PTY_GROUPS_DIR } from "./ptyGroupRegistry.ts";
