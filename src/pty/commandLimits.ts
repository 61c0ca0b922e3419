import { type CgroupLimits, type GateMode, type SpawnLimit, userTaskCount } from "../core/process/index.ts";
import type { PtyConfig } from "../core/config/sections/ptyConfig.ts";

const RLIMIT_NPROC = 6;
const RLIMIT_AS = 9;

/** A session's cgroup limits, from `pty.limits`. */
export function cgroupLimits(limits: PtyConfig["limits"]): CgroupLimits {
  return { pidsMax: limits.pids_max, memoryMaxBytes: limits.memory_max_mb * 1_048_576, cpuWeight: limits.cpu_weight };
}

/**
 * Where no cgroup can be had: per-process limits. RLIMIT_NPROC counts every task of the user:
 * with a user of their own, commands get pids_max; sharing agentd's user, they get what that
 * user runs now plus pids_max, so a fork bomb stops there while agentd, whose own limit is the
 * system's, can still start threads and commands.
 */
export function commandRlimits(limits: PtyConfig["limits"], mode: GateMode): SpawnLimit[] {
  const bytes = limits.memory_max_mb * 1_048_576;
  const uid = process.getuid?.() ?? 0;
  const tasks = mode === "command_user" || uid === 0 ? limits.pids_max : userTaskCount(uid) + limits.pids_max;
  return [
    { resource: RLIMIT_AS, soft: bytes, hard: bytes },
    { resource: RLIMIT_NPROC, soft: tasks, hard: tasks },
  ];
}
