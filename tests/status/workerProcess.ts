import type { Subprocess } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { spawnAgentd, stopChild } from "../support/binary.ts";
import { makeTempDir } from "../support/tempDir.ts";
import { GiveUp, waitFor } from "../support/waitFor.ts";

export interface RunningWorker {
  child: Subprocess<"ignore", "pipe", "pipe">;
  dataDir: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** `agentd serve --worker` alone (no supervisor) on 127.0.0.1, a free port, a fresh data dir. */
export async function startWorker(extraArgs: string[] = []): Promise<RunningWorker> {
  const dataDir = makeTempDir("agentd-worker-");
  const child = await spawnAgentd(["serve", "--worker", "--port", "0", "--data-dir", dataDir, ...extraArgs], {
    cwd: dataDir,
    env: { HOME: dataDir },
  });
  const ready = await waitFor(
    "the worker's ready.json",
    () => {
      if (child.exitCode !== null) throw new GiveUp(`the worker exited with code ${child.exitCode}`);
      try {
        return JSON.parse(readFileSync(join(dataDir, "ready.json"), "utf8")) as { url: string; pid: number };
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 30_000 },
  );
  return { child, dataDir, url: ready.url, pid: ready.pid, stop: () => stopChild(child) };
}
