import { readdirSync, readFileSync } from "node:fs";
import { expect } from "bun:test";
import { waitFor } from "../support/waitFor.ts";

/** Test helpers that look at the test process itself: its fds, threads and child processes. */

export function openFdCount(): number {
  return readdirSync("/proc/self/fd").length;
}

export function threadCount(): number {
  return readdirSync("/proc/self/task").length;
}

interface ProcessEntry {
  pid: number;
  state: string;
}

function readStat(pid: number): { ppid: number; state: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // comm may contain spaces and parentheses: the fields after it start at the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0]!, ppid: Number(fields[1]) };
  } catch {
    return undefined;
  }
}

/** Direct children of this process, zombies included (state Z). */
export function childProcesses(): ProcessEntry[] {
  const children: ProcessEntry[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const stat = readStat(pid);
    if (stat?.ppid === process.pid) children.push({ pid, state: stat.state });
  }
  return children;
}

/** Whether `pid` is a live process (a zombie counts as dead). */
export function isAlive(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== "Z" && stat.state !== "X";
}

/** The state a test must leave behind: the fds it started with, and no child process, zombie or not. */
export async function expectNoLeaks(baselineFds: number): Promise<void> {
  await waitFor("no child process left", () => childProcesses().length === 0, { timeoutMs: 3000 });
  expect(childProcesses()).toEqual([]);
  expect(openFdCount()).toBeLessThanOrEqual(baselineFds);
}
