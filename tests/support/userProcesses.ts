import { readdirSync, readFileSync } from "node:fs";

/** Every live (not zombie) process whose real uid is `uid`, read from /proc. */
export function processesOf(uid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      if (/^State:\s+Z/m.test(status)) continue;
      if (new RegExp(`^Uid:\\s+${uid}\\s`, "m").test(status)) pids.push(Number(name));
    } catch {
      // Ended meanwhile.
    }
  }
  return pids;
}
