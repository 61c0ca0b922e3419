import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { removeTempDirs } from "../support/tempDir.ts";
import { SmallDisk } from "./support/smallDisk.ts";
import { waitFor } from "../support/waitFor.ts";
import { personHeaders, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// The compiled ./agentd with its data dir on a 2 MiB tmpfs that the test fills: clear errors
// (507 disk_full naming the path), /health failing at once, no command started unrecorded, no torn
// log line, and service back by itself once space is freed.

const disk = new SmallDisk("agentd-diskfull-outside-");
const dataDir = disk.dataDir;
let daemon: DaemonProcess | undefined;

beforeAll(() => {
  disk.mount();
  // A line cut short by an earlier run (a kill or a full disk mid-write): the next start cuts it back.
  mkdirSync(join(dataDir, "logs"), { recursive: true });
  writeFileSync(join(dataDir, "logs", "agentd.log"), '{"ts":"t","level":"info","component":"x","event":"whole"}\n{"ts":"t","level":"in');
});

afterAll(async () => {
  await daemon?.stop();
  disk.unmount();
  removeTempDirs();
});

async function health(url: string): Promise<{ status: number; store: string }> {
  const response = await fetch(`${url}/health`);
  const body = (await response.json()) as { checks: Record<string, Array<{ status: string }>> };
  return { status: response.status, store: body.checks["store:writable"]![0]!.status };
}

function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
    readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number),
  );
}

describe("full disk (compiled binary, data dir on a 2 MiB tmpfs)", () => {
  test("a torn last log line is cut back at start", async () => {
    daemon = await startDaemon({ dataDir, config: { watchdog: { enabled: false } } });
    const text = readFileSync(join(dataDir, "logs", "agentd.log"), "utf8");
    expect(text.startsWith('{"ts":"t","level":"info","component":"x","event":"whole"}\n{"ts":')).toBe(true);
    expect(text).not.toContain('"level":"in{');
    for (const line of text.trimEnd().split("\n")) expect(() => JSON.parse(line)).not.toThrow();
  });

  test("writes answer 507 disk_full naming the path, /health fails at once, and a PTY command is not started", async () => {
    const url = daemon!.url;
    expect(await health(url)).toEqual({ status: 200, store: "pass" });
    expect(disk.fill()).toBe("ENOSPC");

    // SQLite may still fit a few rows in its WAL's free frames; the first write it refuses must be a 507.
    let refused: Response | undefined;
    for (let i = 0; i < 2000 && !refused; i++) {
      const response = await fetch(`${url}/api/sessions`, {
        method: "POST",
        headers: personHeaders(url, { "content-type": "application/json" }),
        body: "{}",
      });
      if (response.status === 201) continue;
      refused = response;
    }
    expect(refused?.status).toBe(507);
    const body = (await refused!.json()) as { error: { code: string; message: string; details: { path: string } } };
    expect(body.error.code).toBe("disk_full");
    expect(body.error.details.path.startsWith(dataDir)).toBe(true);
    expect(body.error.message).toContain(body.error.details.path);
    // The very next probe says so.
    expect(await health(url)).toEqual({ status: 503, store: "fail" });

    const marker = join(disk.outside, "pty-ran");
    const workerPid = daemon!.workerPid();
    const before = childrenOf(workerPid);
    const pty = await fetch(`${url}/api/pty`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ cmd: `touch ${marker}; sleep 30`, yield_time_ms: 100 }),
    });
    expect(pty.status).toBe(507);
    expect(((await pty.json()) as { error: { code: string } }).error.code).toBe("disk_full");
    // Had it been spawned, its shell would still be the worker's child (sleeping) and the marker would exist.
    expect(childrenOf(workerPid)).toEqual(before);
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(join(dataDir, "pty-groups"))).toEqual([]);
  });

  test("once space is freed, the service comes back by itself and the log holds no torn line", async () => {
    const url = daemon!.url;
    disk.free();
    await waitFor("/health to pass again", async () => (await health(url)).status === 200, { timeoutMs: 10_000 });
    expect(await health(url)).toEqual({ status: 200, store: "pass" });
    const created = await fetch(`${url}/api/sessions`, {
      method: "POST",
      headers: personHeaders(url, { "content-type": "application/json" }),
      body: "{}",
    });
    expect(created.status).toBe(201);
    const pty = await fetch(`${url}/api/pty`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ cmd: "echo back-again", yield_time_ms: 5000 }),
    });
    expect(pty.status).toBe(200);
    expect(((await pty.json()) as { output: string }).output).toContain("back-again");
    const pid = daemon!.workerPid();
    await daemon!.stop();
    daemon = undefined;
    const lines = readFileSync(join(dataDir, "logs", "agentd.log"), "utf8").split("\n");
    expect(lines.pop()).toBe("");
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    // The worker never died on the way.
    expect(lines.filter((line) => line.includes('"event":"worker.exit"') && line.includes(`"pid":${pid}`)).length).toBe(0);
  });
});
