import { readdirSync, readFileSync } from "node:fs";

const CACHE_MS = 5000;
let cached: { uid: number; count: number; at: number } | undefined;

/**
 * How many tasks (threads included) this uid runs now, as the kernel counts them against
 * RLIMIT_NPROC; read from /proc at most every few seconds, since a spawn must stay cheap.
 */
export function userTaskCount(uid: number): number {
  const now = Date.now();
  if (cached && cached.uid === uid && now - cached.at < CACHE_MS) return cached.count;
  let count = 0;
  for (const name of readdirSync("/proc")) {
    if (name.charCodeAt(0) > 57) continue; // not a pid
    let status: string;
    try {
      status = readFileSync(`/proc/${name}/status`, "latin1");
    } catch {
      continue; // ended meanwhile
    }
    const real = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    if (Number(real) !== uid) continue;
    count += Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 1);
  }
  cached = { uid, count, at: now };
  return count;
}
