import { writeFileSync } from "node:fs";
import { AgentdError } from "../../errors/index.ts";
import { cgroupDescendants, errnoOf, readPids, removeCgroupDir } from "./execute.ts";

/** A group of cgroups killed and removed together: a session (one directory per hierarchy), or an instance. */
export interface KillTarget {
  /** The directories, one per hierarchy; child cgroups below them go too. */
  dirs: readonly string[];
  /** cgroup.kill of the v2 or unified directory: kills the whole subtree, forks in flight included. */
  killFile?: string;
}

export const KILL_WAIT_MS = 2000;
const POLL_MS = 20;

/** Every directory of the target, deepest first (children must go before their parent). */
function allDirs(target: KillTarget): string[] {
  return target.dirs.flatMap((dir) => [...cgroupDescendants(dir), dir]);
}

/** The processes in the target, any hierarchy, child cgroups included; 0 stands for one in another pid namespace. */
export function listPids(target: KillTarget): number[] {
  const pids = new Set<number>();
  for (const dir of allDirs(target)) for (const pid of readPids(`${dir}/cgroup.procs`)) pids.add(pid);
  return [...pids].sort((a, b) => a - b);
}

/** cgroup.kill written: false where there is none (Linux before 5.14, or the cgroup is gone). */
function writeKillFile(path: string): boolean {
  try {
    writeFileSync(path, "1");
    return true;
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return false;
    throw new AgentdError("cgroup_unavailable", `cannot write 1 to ${path}: ${errnoOf(error) ?? String(error)}`, { cause: error });
  }
}

function sigkill(pid: number): void {
  // 0 would signal our own process group; agentd itself never belongs to a session, but a bug must not kill it.
  if (pid <= 0 || pid === process.pid) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch (error) {
    if (errnoOf(error) !== "ESRCH") throw error;
    // ESRCH: it ended between the listing and the signal.
  }
}

/**
 * One pass: cgroup.kill when there is one; else (or when processes outlive it for half the wait:
 * some joined only the v1 hierarchies) SIGKILL every listed process. A fork bomb outruns one pass
 * but not the loop: pids.max bounds it and what is killed forks no more. Then, once nothing is
 * listed, removes the directories. True when they are all gone.
 */
function killStep(target: KillTarget, elapsedMs: number, waitMs: number): boolean {
  const pids = listPids(target);
  if (pids.length === 0) return allDirs(target).every(removeCgroupDir);
  const killed = target.killFile !== undefined && writeKillFile(target.killFile);
  // A listed pid may end and be reused before the signal; the window is one read, and cgroup.kill (Linux 5.14+) has none.
  if (!killed || elapsedMs >= waitMs / 2) for (const pid of pids) sigkill(pid);
  return false;
}

/** Kills everything in the target and removes its directories, waiting at most `waitMs`. True when it emptied and is gone. */
export async function killAndRemove(target: KillTarget, waitMs = KILL_WAIT_MS): Promise<boolean> {
  const start = performance.now();
  for (;;) {
    const elapsed = performance.now() - start;
    if (killStep(target, elapsed, waitMs)) return true;
    if (elapsed >= waitMs) return false;
    await Bun.sleep(POLL_MS);
  }
}

/** killAndRemove, blocking: for agentd's start, where a dead agentd's leftovers go before anything runs. */
export function killAndRemoveSync(target: KillTarget, waitMs = KILL_WAIT_MS): boolean {
  const start = performance.now();
  for (;;) {
    const elapsed = performance.now() - start;
    if (killStep(target, elapsed, waitMs)) return true;
    if (elapsed >= waitMs) return false;
    Bun.sleepSync(POLL_MS);
  }
}
