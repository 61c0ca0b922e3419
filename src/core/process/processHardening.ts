import { setProcessControl } from "./processLibc.ts";

const PR_SET_DUMPABLE = 4;
/** Carries the operator's umask from the supervisor to the worker, whose own is already 077. */
export const OPERATOR_UMASK_ENV = "AGENTD_OPERATOR_UMASK";

export interface Hardening {
  /** The umask agentd was started with: the commands the agent runs get it back. */
  operatorUmask: number;
  /** Why the process could not be made undumpable, if it could not. */
  problem?: string;
}

/**
 * Run first in both agentd processes. Not dumpable: a command the agent runs as the same user can
 * no longer read /proc/<agentd>/environ or mem (nor ptrace it), where the provider keys live. Umask
 * 077: every file agentd creates (store, WAL, logs, sidecars, token, tool output) is its user's alone.
 */
export function hardenProcess(env: Readonly<Record<string, string | undefined>> = process.env): Hardening {
  const inherited = process.umask(0o077);
  const passed = env[OPERATOR_UMASK_ENV];
  const operatorUmask = passed !== undefined && /^[0-7]{1,4}$/.test(passed) ? Number.parseInt(passed, 8) : inherited;
  return { operatorUmask, problem: setProcessControl(PR_SET_DUMPABLE, 0, "PR_SET_DUMPABLE, 0") };
}
