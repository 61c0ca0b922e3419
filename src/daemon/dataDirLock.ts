import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { acquireInstanceLock, type InstanceLock } from "../core/lock/index.ts";
import { readReadyFile } from "./readyFile.ts";

export type DataDirClaim = { lock: InstanceLock } | { refusal: string };

export function lockFilePath(dataDir: string): string {
  return join(dataDir, "agentd.lock");
}

/**
 * One supervisor per data dir: takes `<data_dir>/agentd.lock` for the supervisor's life. When
 * another supervisor holds it, says who and where, having changed nothing in the data dir.
 */
export function claimDataDir(dataDir: string): DataDirClaim {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const attempt = acquireInstanceLock(lockFilePath(dataDir));
  if (attempt.acquired) return { lock: attempt.lock };
  const ready = readReadyFile(dataDir);
  // The holder writes its pid right after locking; ready.json names it too once its worker listens.
  const pid = attempt.holder?.pid ?? ready?.supervisor_pid ?? undefined;
  const url = ready && ready.supervisor_pid === pid ? ready.url : undefined;
  const where = url ? `at ${url}` : "(its worker is not listening yet)";
  return { refusal: `already running (pid ${pid ?? "unknown"}) ${where}; data dir ${dataDir}` };
}
