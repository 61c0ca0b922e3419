import { readdirSync, readlinkSync } from "node:fs";

/**
 * What every thread of a process has open (the targets of /proc/<pid>/task/<tid>/fd/*): the
 * process's own fd directory is its first thread's, which is empty once that thread has exited
 * while others go on, and a thread made without CLONE_FILES has a table of its own. Undefined when
 * the process cannot be read (gone, another user's).
 */
export function processFdLinks(proc: string, pid: number): string[] | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync(`${proc}/${pid}/task`);
  } catch {
    return undefined;
  }
  const links = new Set<string>();
  let readable = false;
  for (const task of tasks) {
    const dir = `${proc}/${pid}/task/${task}/fd`;
    let fds: string[];
    try {
      fds = readdirSync(dir);
      readable = true;
    } catch {
      continue; // The thread ended while we looked.
    }
    for (const fd of fds) {
      try {
        links.add(readlinkSync(`${dir}/${fd}`));
      } catch {
        // The fd closed while we looked.
      }
    }
  }
  return readable ? [...links] : undefined;
}
