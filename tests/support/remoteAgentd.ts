import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isProcessAlive, waitFor } from "./waitFor.ts";

/**
 * Stops the agentd a hop started under `home` (same machine, another HOME) by the pids in its
 * ready.json. The supervisor, signalled first, often takes its worker down before the worker's
 * own signal lands: a pid already gone is fine.
 */
export async function stopRemoteAgentd(home: string): Promise<void> {
  const readyPath = join(home, ".agentd", "ready.json");
  if (!existsSync(readyPath)) return;
  const ready = JSON.parse(readFileSync(readyPath, "utf8")) as { pid: number; supervisor_pid: number | null };
  const pids = [ready.supervisor_pid, ready.pid].filter((pid): pid is number => typeof pid === "number" && isProcessAlive(pid));
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGTERM");
    } catch (error) {
      if ((error as { code?: string }).code !== "ESRCH") throw error;
    }
  }
  await waitFor("the remote agentd to stop", () => pids.every((pid) => !isProcessAlive(pid)), { timeoutMs: 30_000 });
}
