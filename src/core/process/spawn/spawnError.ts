import { AgentdError } from "../../errors/index.ts";

/** What the spawner's child was doing when it failed, by the stage number commandSpawn.c writes. */
export const SPAWN_STAGES = [
  "none",
  "signals",
  "session",
  "terminal",
  "stdio",
  "cgroup",
  "oom_score_adj",
  "rlimit",
  "groups",
  "gid",
  "uid",
  "no_new_privs",
  "cwd",
  "exec",
  "namespaces",
  "id_map",
  "pid_namespace",
  "mounts",
  "pin",
  "hide",
  "read_only",
  "terminals",
  "proc",
] as const;

export type SpawnStage = (typeof SPAWN_STAGES)[number];

const ERRNO_NAMES: Record<number, string> = {
  1: "EPERM",
  2: "ENOENT",
  8: "ENOEXEC",
  10: "ECHILD",
  11: "EAGAIN",
  12: "ENOMEM",
  13: "EACCES",
  16: "EBUSY",
  20: "ENOTDIR",
  22: "EINVAL",
  24: "EMFILE",
  28: "ENOSPC",
  30: "EROFS",
  38: "ENOSYS",
  87: "EUSERS",
};

export function errnoName(errno: number): string {
  return ERRNO_NAMES[errno] ?? `errno ${errno}`;
}

const STAGE_WORDS: Record<SpawnStage, string> = {
  none: "start it",
  signals: "reset its signals",
  session: "start its session",
  terminal: "give it its terminal",
  stdio: "give it its input and output",
  cgroup: "put it in its cgroup",
  oom_score_adj: "set its OOM score",
  rlimit: "set its limits",
  groups: "set its groups",
  gid: "change its group",
  uid: "change its user",
  no_new_privs: "set no_new_privs",
  cwd: "enter its working directory",
  exec: "run it",
  namespaces: "make its sandbox's namespaces",
  id_map: "map its uid in its sandbox",
  pid_namespace: "start it as its sandbox's first process",
  mounts: "make its sandbox's mounts private",
  pin: "keep a directory above a protected path from being renamed",
  hide: "hide a path from it",
  read_only: "make a path read-only for it",
  terminals: "give its sandbox terminals of its own",
  proc: "mount its sandbox's /proc",
};

/** A command that could not be started with everything asked for: it never ran with less. */
export class SpawnError extends AgentdError {
  constructor(
    readonly program: string,
    readonly stage: SpawnStage,
    readonly errno: number,
    detail?: string,
  ) {
    super(
      stage === "cwd" ? "pty_bad_workdir" : "pty_spawn_failed",
      `Cannot ${STAGE_WORDS[stage]} for ${program}: ${errnoName(errno)}${detail ? ` (${detail})` : ""}`,
      { details: { stage, errno: errnoName(errno) } },
    );
  }
}
