import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, runAgentd, spawnAgentd, stopChild } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { GiveUp, isProcessAlive, waitFor } from "../support/waitFor.ts";

// The supervisor takes its config from a short-lived `serve --resolve-config` child (no zod in the
// supervisor): what the child resolves must be what the supervisor acts on.

const workerPids: number[] = [];

beforeAll(async () => {
  await ensureBinary();
}, 120_000);

afterAll(() => {
  for (const pid of workerPids) if (isProcessAlive(pid)) process.kill(pid, "SIGKILL");
  removeTempDirs();
});

describe("agentd serve: the config handed to the supervisor", () => {
  test("found through AGENTD_CONFIG, {env:} resolved in the child: the supervisor uses its data_dir", async () => {
    const home = makeTempDir("agentd-e2e-");
    const dataDir = join(home, "configured-data");
    const config = join(home, "agentd.jsonc");
    writeFileSync(config, '{\n  "data_dir": "{env:E2E_DATA_DIR}",\n  "server": { "port": 0 }\n}\n');
    const child = await spawnAgentd(["serve"], { cwd: home, env: { HOME: home, AGENTD_CONFIG: config, E2E_DATA_DIR: dataDir } });
    try {
      const ready = await waitFor(
        "ready.json in the configured data dir",
        () => {
          if (child.exitCode !== null) throw new GiveUp(`agentd serve exited with ${child.exitCode}`);
          return existsSync(join(dataDir, "ready.json"))
            ? (JSON.parse(readFileSync(join(dataDir, "ready.json"), "utf8")) as { pid: number; supervisor_pid: number })
            : undefined;
        },
        { timeoutMs: 60_000 },
      );
      workerPids.push(ready.pid);
      expect(ready.supervisor_pid).toBe(child.pid);
      // The supervisor holds the lock and writes the log file in the data dir the child resolved.
      expect(JSON.parse(readFileSync(join(dataDir, "agentd.lock"), "utf8")).pid).toBe(child.pid);
      expect(readFileSync(join(dataDir, "logs", "agentd.log"), "utf8")).toContain('"event":"supervisor.start"');
    } finally {
      await stopChild(child);
    }
    expect(child.exitCode).toBe(0);
  }, 90_000);

  test("run by hand, --resolve-config refuses and prints nothing on stdout", async () => {
    const home = makeTempDir("agentd-e2e-");
    const result = await runAgentd(["serve", "--resolve-config"], { cwd: home, env: { HOME: home, OPENAI_API_KEY: "sk-e2e-secret" } });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("fd 3");
    expect(result.stderr).not.toContain("sk-e2e-secret");
  }, 60_000);
});
