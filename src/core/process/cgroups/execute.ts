import {
  closeSync,
  type Dirent,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { AgentdError } from "../../errors/index.ts";
import type { CgroupOp } from "./plan.ts";

export function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

function failure(what: string, path: string, error: unknown, hint = ""): AgentdError {
  const code = errnoOf(error) ?? (error instanceof Error ? error.message : String(error));
  return new AgentdError("cgroup_unavailable", `cannot ${what} ${path}: ${code}${hint}`, { cause: error, details: { path } });
}

/** The pids a cgroup.procs lists (0 for a process in another pid namespace); none once the cgroup is gone. */
export function readPids(procsFile: string): number[] {
  let text: string;
  try {
    text = readFileSync(procsFile, "utf8");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return []; // The cgroup was removed: it holds no one.
    throw failure("read", procsFile, error);
  }
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid >= 0);
}

/** The cgroup directories below `dir` (a child cgroup is a directory), deepest first; none once it is gone. */
export function cgroupDescendants(dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return []; // Removed meanwhile.
    throw failure("list", dir, error);
  }
  return entries
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => [...cgroupDescendants(`${dir}/${entry.name}`), `${dir}/${entry.name}`]);
}

/**
 * Writes every pid `from` lists into `to`, one write each (the kernel takes one pid per write),
 * then again for any that appeared meanwhile (a child agentd started while moving). A pid still
 * listed after it was written is left: enabling controllers then fails and says so.
 */
function moveProcs(from: string, to: string): void {
  const moved = new Set<number>();
  for (let round = 0; round < 10; round++) {
    const pids = readPids(from).filter((pid) => pid > 0 && !moved.has(pid));
    if (pids.length === 0) return;
    let fd: number;
    try {
      fd = openSync(to, "w");
    } catch (error) {
      throw failure("open", to, error);
    }
    try {
      for (const pid of pids) {
        try {
          writeSync(fd, `${pid}\n`);
        } catch (error) {
          if (errnoOf(error) !== "ESRCH") throw failure(`move process ${pid} into`, to, error);
          // ESRCH: it exited between the listing and the move; nothing to move.
        }
        moved.add(pid);
      }
    } finally {
      closeSync(fd);
    }
  }
}

/**
 * Runs the steps in order; the first failure throws a cgroup_unavailable AgentdError naming the
 * path. Each directory it creates is appended to `created`, so a caller can undo a half-made session.
 */
export function runOps(ops: readonly CgroupOp[], created: string[] = []): void {
  for (const op of ops) {
    switch (op.op) {
      case "mkdir":
        try {
          mkdirSync(op.path);
          created.push(op.path);
        } catch (error) {
          if (!(op.existingOk && errnoOf(error) === "EEXIST")) throw failure("create", op.path, error);
        }
        break;
      case "write":
        if (op.ifExists && !existsSync(op.path)) break;
        try {
          writeFileSync(op.path, op.value);
        } catch (error) {
          const code = errnoOf(error);
          if (code !== undefined && op.tolerate?.includes(code)) break;
          const hint = op.path.endsWith("cgroup.subtree_control") && code === "EBUSY" ? " (the cgroup still holds processes)" : "";
          throw failure(`write ${JSON.stringify(op.value)} to`, op.path, error, hint);
        }
        break;
      case "moveProcs":
        moveProcs(op.from, op.to);
        break;
    }
  }
}

/** Removes an empty cgroup directory: true once it is gone, false while it is busy (still populated). */
export function removeCgroupDir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ENOENT") return true; // Already removed.
    if (code === "EBUSY" || code === "ENOTEMPTY") return false;
    throw failure("remove", dir, error);
  }
}
