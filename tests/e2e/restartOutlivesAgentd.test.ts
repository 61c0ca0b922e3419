import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";
import { startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// A process check fails (no pidfile); tier 1 runs the pre-approved `restart-svc`, which starts the
// service in the background and writes its pidfile. Stopping agentd must leave that service running.

let daemon: DaemonProcess | undefined;
let servicePid: number | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  if (servicePid !== undefined && isProcessAlive(servicePid)) process.kill(servicePid, "SIGKILL");
  servicePid = undefined;
}, 60_000);
afterAll(removeTempDirs);

describe("a service the watchdog restarted outlives agentd", () => {
  test("stopping agentd leaves the restarted service running", async () => {
    await ensureBinary();
    const home = makeTempDir("agentd-wd-outlive-");
    const dataDir = join(home, "data");
    mkdirSync(dataDir);
    const pidfile = join(home, "svc.pid");
    daemon = await startDaemon({
      dataDir,
      config: {
        watchdog: {
          tick_ms: 100,
          verify_window_s: 1,
          resolve_after_s: 3600,
          checks: [{ type: "process", name: "svc", pidfile, interval_s: 0.2, failure_threshold: 1, success_threshold: 1 }],
          rules: [{ id: "restart-svc", when: { signal: "check.process" }, do: "run_command", command: "restart-svc" }],
          commands: {
            "restart-svc": {
              // A daemon as launch scripts start one: in the background, output to its own log.
              argv: ["/bin/sh", "-c", `sleep 3600 >'${join(home, "svc.log")}' 2>&1 & echo $! > '${pidfile}'`],
              pre_approved: true,
              timeout_ms: 20_000,
            },
          },
        },
      },
    });
    const done = await daemon.waitForLine((r) => r.event === "watchdog.action" && r.action === "run_command");
    expect(done).toMatchObject({ tier: 1, command: "restart-svc" });
    const pid = await waitFor(
      "the service's pidfile",
      () => {
        if (!existsSync(pidfile)) return undefined;
        const n = Number(readFileSync(pidfile, "utf8").trim());
        return Number.isInteger(n) && n > 0 ? n : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    servicePid = pid;
    expect(isProcessAlive(pid)).toBe(true);
    const proc = daemon.proc;
    await daemon.stop();
    daemon = undefined;
    expect(proc.exitCode).toBe(0);
    // Running, not a zombie left to a dead parent (isProcessAlive reads its state).
    expect(isProcessAlive(pid)).toBe(true);
  });
});
