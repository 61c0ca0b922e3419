import { readFileSync } from "node:fs";

/** The fields of /proc/<pid>/stat agentd reads: who a process's parent is and what its terminal runs. */
export interface ProcStat {
  pid: number;
  comm: string;
  /** R, S, D, Z (a zombie: ended, not yet reaped), T… */
  state: string;
  ppid: number;
  /** The terminal's foreground process group, -1 without a controlling terminal. */
  tpgid: number;
}

/**
 * Parses one /proc/<pid>/stat line. comm sits in parentheses and may itself hold spaces and
 * parentheses, so the fields after it are counted from the last ")". Pure.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  // After comm: state(3) ppid(4) pgrp(5) session(6) tty_nr(7) tpgid(8) …
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const ppid = Number(rest[1]);
  const tpgid = Number(rest[5]);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(tpgid)) return undefined;
  return { pid, comm: text.slice(open + 1, close), state: rest[0] ?? "?", ppid, tpgid };
}

/** /proc/<pid>/stat, or undefined when the process is gone or hidden. */
export function readProcStat(pid: number, procRoot = "/proc"): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`${procRoot}/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}
