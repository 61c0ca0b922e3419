import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";

let daemon: DaemonProcess | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  removeTempDirs();
});

describe("what a dead worker leaves behind", () => {
  test("kill -9 of the worker: its terminals' processes are ended by the supervisor", async () => {
    daemon = await startDaemon({ dataDir: makeTempDir("agentd-e2e-orphans-"), config: {} });
    // A process that ignores the hang-up and terminate signals a closing terminal would send.
    const opened = await api(daemon.url, "/api/pty", { body: { cmd: "trap '' HUP TERM; echo pid=$$; sleep 1000", yield_time_ms: 500 } });
    expect(opened.running).toBe(true);
    const shell = Number(/pid=(\d+)/.exec(opened.output)![1]);
    expect(isProcessAlive(shell)).toBe(true);
    const mark = daemon.lines.length;
    await daemon.killWorker();
    await daemon.waitForLine((r) => r.event === "pty.orphans_killed", mark);
    await waitFor("the orphaned shell to be gone", () => !isProcessAlive(shell) || undefined, { timeoutMs: 10_000 });
    expect(daemon.proc.exitCode).toBeNull();
  });

  test("the data dir is closed to other users: its owner's alone, or root's shared with the worker's group only", async () => {
    const dataDir = makeTempDir("agentd-e2e-perms-");
    daemon = await startDaemon({ dataDir, config: {} });
    const info = statSync(dataDir);
    const workerGid = Number(/^Gid:\s*(\d+)/m.exec(readFileSync(`/proc/${daemon.workerPid()}/status`, "utf8"))![1]);
    // Started as root (as the tests run the binary, where any user may reach it), the worker is the service user.
    if (process.getuid?.() === 0) {
      expect(workerGid).not.toBe(0);
      expect({ uid: info.uid, gid: info.gid, mode: info.mode & 0o7777 }).toEqual({ uid: 0, gid: workerGid, mode: 0o1770 });
    } else expect(info.mode & 0o7777).toBe(0o700);
  });
});
