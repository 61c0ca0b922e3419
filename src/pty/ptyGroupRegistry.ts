import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { asDiskFull } from "../core/errors/index.ts";

/** Under the data dir: one file per live PTY process group. */
export const PTY_GROUPS_DIR = "pty-groups";

/**
 * The process groups of the worker's live PTY sessions, one file per group leader under
 * `<data_dir>/pty-groups/`. A worker killed with SIGKILL cannot close its PTYs; the supervisor
 * reads this directory afterwards and ends what is left, so nothing of a dead worker runs on.
 * Each file holds the leader's start time, so a pid the kernel reused is never signalled.
 */
export class PtyGroupRegistry {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /**
   * Writes a group's file before its process exists, so a disk that cannot take it refuses the
   * command instead of running it unrecorded (and a client's retry running it twice). The file is
   * written full size; commit() only overwrites it in place and renames it, which needs no space.
   */
  reserve(id: string): GroupReservation {
    const path = join(this.dir, `pending-${id}`);
    try {
      writeFileSync(path, RESERVED, { mode: 0o600 });
    } catch (error) {
      rmSync(path, { force: true });
      throw asDiskFull(error, path) ?? error;
    }
    return {
      commit: (pid) => {
        const started = processStartTime(pid) ?? "";
        const fd = openSync(path, "r+");
        try {
          writeSync(fd, started.padEnd(RESERVED.length), 0);
        } finally {
          closeSync(fd);
        }
        renameSync(path, join(this.dir, String(pid)));
      },
      cancel: () => rmSync(path, { force: true }),
    };
  }

  /** Records a group whose leader already runs (reserve + commit in one). */
  add(pid: number): void {
    this.reserve(String(pid)).commit(pid);
  }

  remove(pid: number): void {
    rmSync(join(this.dir, String(pid)), { force: true });
  }
}

export interface GroupReservation {
  /** Records the started process's group in the reserved file. */
  commit(pid: number): void;
  /** Drops the reservation of a process that did not start. */
  cancel(): void;
}

// Room for a start time (clock ticks since boot: at most 20 digits); trailing spaces are trimmed on read.
const RESERVED = " ".repeat(24);

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined; // already gone
  }
}

/** Ends the groups a dead worker left behind (SIGKILL: nobody reads those terminals any more). */
export function killOrphanedPtyGroups(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return []; // no PTY was ever opened
  }
  const killed: number[] = [];
  for (const name of names) {
    const pid = Number(name);
    const path = join(dir, name);
    const recorded = readFileSync(path, "utf8").trim();
    const leader = processStartTime(pid);
    // The leader may have exited while members of its group run on: Linux does not hand out a pid
    // that is still some group's id, so a group without its leader is still the one recorded.
    if (Number.isInteger(pid) && pid > 1 && recorded !== "" && (leader === recorded || leader === undefined)) {
      try {
        process.kill(-pid, "SIGKILL");
        killed.push(pid);
      } catch {
        // The group ended between the check and the signal.
      }
    }
    rmSync(path, { force: true });
  }
  return killed;
}
