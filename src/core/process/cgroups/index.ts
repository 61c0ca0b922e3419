export { CommandCgroups } from "./commandCgroups.ts";
export type { OpenOptions, SessionCgroup } from "./commandCgroups.ts";
export { detectCgroupLayout } from "./detect.ts";
export type { DetectOptions } from "./detect.ts";
export { CONTROLLERS, layoutFromProc, parseCgroupMounts, parseProcCgroup } from "./layout.ts";
export type { CgroupLayout, Controller, V1Hierarchy } from "./layout.ts";
export { cpuShares, planSession, planTree } from "./plan.ts";
export type { CgroupLimits, CgroupOp, CommandTree } from "./plan.ts";
