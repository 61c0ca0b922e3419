import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Written by the worker once it listens, so a supervisor, a hop or a script can find it. */
export interface ReadyInfo {
  pid: number;
  supervisor_pid: number | null;
  bind: string;
  port: number;
  url: string;
  version: string;
  started_at: string;
}

export function readyFilePath(dataDir: string): string {
  return join(dataDir, "ready.json");
}

export function writeReadyFile(dataDir: string, info: ReadyInfo): void {
  const path = readyFilePath(dataDir);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(info)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

export function readReadyFile(dataDir: string): ReadyInfo | undefined {
  try {
    return JSON.parse(readFileSync(readyFilePath(dataDir), "utf8")) as ReadyInfo;
  } catch {
    return undefined;
  }
}

export function removeReadyFile(dataDir: string, pid: number): void {
  if (readReadyFile(dataDir)?.pid === pid) rmSync(readyFilePath(dataDir), { force: true });
}

/**
 * Removes ready.json when a worker of this supervisor wrote it: a supervisor that exits (stopped,
 * given up on a crash loop, failed at start) must not leave clients pointed at a dead worker.
 */
export function removeSupervisorReadyFile(dataDir: string, supervisorPid: number): void {
  if (readReadyFile(dataDir)?.supervisor_pid === supervisorPid) rmSync(readyFilePath(dataDir), { force: true });
}

/** Removes ready.json whoever wrote it: for a supervisor that holds the data dir's lock, any left is a dead instance's. */
export function removeStaleReadyFile(dataDir: string): void {
  rmSync(readyFilePath(dataDir), { force: true });
}
