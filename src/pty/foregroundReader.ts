import { readFileSync } from "node:fs";
import { readProcStat } from "../core/process/index.ts";

/**
 * The command name of the program in the foreground of the terminal that `leaderPid` controls:
 * the leader's stat names the foreground process group (tpgid), whose leader's comm says what
 * reads the next typed line (bash, python3, vim). Undefined when it cannot be told.
 */
export function foregroundReader(leaderPid: number, procRoot = "/proc"): string | undefined {
  const leader = readProcStat(leaderPid, procRoot);
  if (!leader || leader.tpgid <= 0) return undefined;
  try {
    return readFileSync(`${procRoot}/${leader.tpgid}/comm`, "utf8").trim();
  } catch {
    return undefined;
  }
}
