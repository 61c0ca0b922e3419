import { readdirSync, readFileSync } from "node:fs";
import { readProcStat } from "../core/process/index.ts";
import { processFdLinks } from "./processFds.ts";
import { socketInode } from "./procNet.ts";

/** Rounds of the walk before giving up to the full scan: each round after one where a process moved or ended. */
const WALK_ROUNDS = 4;
/** More processes than this below agentd: the walk gives up and the full scan decides. */
const MAX_DESCENDANTS = 4096;

export type DescendantAnswer =
  | { holder: number; comm?: string }
  /** No descendant holds it; `quiet` when none holds any socket or io_uring at all (nothing to pass a socket through). */
  | { none: true; quiet: boolean }
  | "unsettled";

/**
 * Which process below the roots (the worker and the supervisor, themselves excluded) holds the
 * socket `inode`. The supervisor is a child subreaper, so a process whose parent exits moves up to
 * it and stays below the roots; a round in which a process ended or could not be read may have
 * missed one that moved, so another round follows. "none" only from a round where every read
 * succeeded; "unsettled" when rounds run out (a process that keeps forking and exiting), and the
 * caller then scans every process instead. "none" is no proof of a person: the socket may be in
 * flight in a descriptor-passing message between two of agentd's commands, held by no process.
 */
export function holderAmongDescendants(inode: number, roots: readonly number[], proc = "/proc"): DescendantAnswer {
  // A zombie's children have moved before it became one: it forces one more round, not every round.
  const knownZombies = new Set<number>();
  for (let round = 0; round < WALK_ROUNDS; round++) {
    let settled = true;
    let quiet = true;
    const seen = new Set<number>(roots);
    const queue = [...roots];
    for (let i = 0; i < queue.length; i++) {
      if (seen.size > MAX_DESCENDANTS) return "unsettled";
      const pid = queue[i]!;
      const children = childrenOf(proc, pid);
      if (!children) {
        settled &&= isSettledExit(proc, pid, knownZombies);
        continue;
      }
      for (const child of children) {
        if (seen.has(child)) continue;
        seen.add(child);
        queue.push(child);
        const held = heldSockets(proc, child);
        if (held === undefined) settled &&= isSettledExit(proc, child, knownZombies);
        else if (held.inodes.includes(inode)) return { holder: child, comm: readProcStat(child, proc)?.comm };
        else quiet &&= held.inodes.length === 0 && !held.ring;
      }
    }
    if (settled) return { none: true, quiet };
  }
  return "unsettled";
}

/** A process we could not read: settled only when it was already a zombie before this round (its children moved before). */
function isSettledExit(proc: string, pid: number, knownZombies: Set<number>): boolean {
  const state = readProcStat(pid, proc)?.state;
  if (state === "Z") {
    if (knownZombies.has(pid)) return true;
    knownZombies.add(pid);
  }
  return false;
}

/** /proc/<pid>/task/<tid>/children of every thread; undefined when the process is gone or the kernel has no such file. */
function childrenOf(proc: string, pid: number): number[] | undefined {
  try {
    const children: number[] = [];
    for (const task of readdirSync(`${proc}/${pid}/task`)) {
      for (const child of readFileSync(`${proc}/${pid}/task/${task}/children`, "utf8").split(" ")) {
        if (child.trim()) children.push(Number(child));
      }
    }
    return children;
  } catch {
    return undefined;
  }
}

/**
 * The socket inodes a process holds, and whether it holds an io_uring (whose registered files keep
 * sockets out of /proc/<pid>/fd); undefined when its descriptors cannot be read (gone, a zombie,
 * another user's).
 */
function heldSockets(proc: string, pid: number): { inodes: number[]; ring: boolean } | undefined {
  const links = processFdLinks(proc, pid);
  if (!links) return undefined;
  const inodes: number[] = [];
  let ring = false;
  for (const link of links) {
    const inode = socketInode(link);
    if (inode !== undefined) inodes.push(inode);
    else if (link === "anon_inode:[io_uring]") ring = true;
  }
  return { inodes, ring };
}
