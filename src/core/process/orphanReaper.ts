import { readdirSync, readFileSync } from "node:fs";
import type { Logger } from "../log/index.ts";
import { isOwnChild } from "./ownChildren.ts";
import { processLibc, setProcessControl } from "./processLibc.ts";
import { readProcStat } from "./procStat.ts";

const PR_SET_CHILD_SUBREAPER = 36;
const WNOHANG = 1;
const REAP_INTERVAL_MS = 1000;
const END_POLL_MS = 50;
/** Killing an adopted process hands its own children to us: rounds go on until the tree is gone or this long after SIGKILL. */
const GIVE_UP_AFTER_KILL_MS = 2000;

export interface OrphanReaper {
  /** Reaps adopted processes that have ended; returns their pids. */
  reap(): number[];
  /** The adopted processes still running (not started by this process itself). */
  adopted(): number[];
  /**
   * Ends every adopted process (and whatever they hand down): SIGTERM to each and its group, SIGKILL
   * after `graceMs`. Returns the pids that were running.
   */
  endAll(graceMs: number): Promise<number[]>;
  stop(): void;
}

/**
 * Makes this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER): a process below it whose
 * parent exits (a double fork, setsid -f, `( … & )`) is re-parented here rather than to init, so it
 * stays in agentd's process tree, where the decision routes recognise it as the agent. Adopted
 * processes are reaped on a timer; children this process started itself (trackChild) are left to Bun.
 */
export function becomeOrphanReaper(log: Logger): OrphanReaper | { problem: string } {
  const problem = setProcessControl(PR_SET_CHILD_SUBREAPER, 1, "PR_SET_CHILD_SUBREAPER");
  if (problem) return { problem };
  const libc = processLibc();
  if ("problem" in libc) return libc;
  const status = new Int32Array(1);

  const adoptedChildren = () => childPids().filter((pid) => !isOwnChild(pid));
  const reap = () => {
    const reaped: number[] = [];
    for (const pid of adoptedChildren()) if (libc.waitpid(pid, status, WNOHANG) === pid) reaped.push(pid);
    if (reaped.length > 0) log.debug("process.orphans_reaped", { pids: reaped });
    return reaped;
  };
  const timer = setInterval(reap, REAP_INTERVAL_MS);
  timer.unref();

  const running = () => adoptedChildren().filter((pid) => readProcStat(pid)?.state !== "Z");
  const endAll = async (graceMs: number) => {
    const ended = new Set<number>();
    const killAt = Date.now() + graceMs;
    const giveUpAt = killAt + GIVE_UP_AFTER_KILL_MS;
    while (Date.now() < giveUpAt) {
      reap();
      const left = running();
      if (left.length === 0) break;
      const kill = Date.now() >= killAt;
      for (const pid of left) {
        if (!kill && ended.has(pid)) continue;
        ended.add(pid);
        signalProcessAndGroup(pid, kill ? "SIGKILL" : "SIGTERM");
      }
      await Bun.sleep(END_POLL_MS);
    }
    reap();
    if (ended.size > 0) log.warn("process.orphans_ended", { pids: [...ended], left: running() });
    return [...ended];
  };
  return { reap, adopted: running, endAll, stop: () => clearInterval(timer) };
}

/** This process's children: /proc/self/task/<tid>/children, or a scan of /proc where the kernel has no such file. */
function childPids(): number[] {
  let tasks: string[];
  try {
    readFileSync(`/proc/self/task/${process.pid}/children`);
    tasks = readdirSync("/proc/self/task");
  } catch {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .filter((pid) => readProcStat(pid)?.ppid === process.pid);
  }
  return tasks.flatMap((task) => {
    try {
      return readFileSync(`/proc/self/task/${task}/children`, "utf8").split(" ").filter(Boolean).map(Number);
    } catch {
      return []; // The thread ended while we looked.
    }
  });
}

/** The process, and the group it leads if it leads one (a group id is its leader's pid, so no other group is hit). */
function signalProcessAndGroup(pid: number, signal: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
    } catch {
      // Not a group leader, or already gone.
    }
  }
}
