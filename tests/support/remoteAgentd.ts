import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary } from "./binary.ts";
import { isProcessAlive, waitFor } from "./waitFor.ts";

/**
 * Puts this build of ./agentd where a hop installs it (`<remoteDir>/bin/agentd`, mode 755), so the
 * hop finds the same sha256 there and skips the upload. Uploading gzips the 134 MB binary (seconds of
 * CPU each time); tests whose subject is not the upload start from this copy, and the upload itself
 * is covered by tests/hop/hop.test.ts and tests/hop/sshdKillStages.test.ts.
 */
export async function preinstallAgentd(remoteDir: string): Promise<void> {
  const binary = await ensureBinary();
  mkdirSync(join(remoteDir, "bin"), { recursive: true });
  copyFileSync(binary, join(remoteDir, "bin", "agentd"));
  chmodSync(join(remoteDir, "bin", "agentd"), 0o755);
}

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
