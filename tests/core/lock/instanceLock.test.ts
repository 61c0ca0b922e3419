import { afterAll, afterEach, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { acquireInstanceLock, readLockHolder } from "../../../src/core/lock/index.ts";
import { BUN } from "../../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../../support/tempDir.ts";
import { waitFor } from "../../support/waitFor.ts";

const TAKER = join(import.meta.dir, "fixtures", "lockTaker.ts");
const children: Subprocess<"ignore", "pipe", "pipe">[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await child.exited;
  }
});
afterAll(removeTempDirs);

function startTaker(path: string) {
  const child = Bun.spawn([BUN, TAKER, path], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  children.push(child);
  let out = "";
  void (async () => {
    for await (const chunk of child.stdout) out += new TextDecoder().decode(chunk);
  })();
  return { child, out: () => out };
}

describe("the instance lock (flock on <data_dir>/agentd.lock)", () => {
  test("one holder at a time; the holder's pid is in the file; released on release()", () => {
    const path = join(makeTempDir(), "agentd.lock");
    const first = acquireInstanceLock(path);
    if (!first.acquired) throw new Error("the first attempt should take the lock");
    expect(readLockHolder(path)?.pid).toBe(process.pid);
    // flock belongs to the open file, so a second open in the same process is refused too.
    const second = acquireInstanceLock(path);
    expect(second).toEqual({ acquired: false, holder: expect.objectContaining({ pid: process.pid }) });
    first.lock.release();
    const third = acquireInstanceLock(path);
    expect(third.acquired).toBe(true);
    if (third.acquired) third.lock.release();
  });

  test("another process holding it: refused with that process's pid, and the file is left as it was", async () => {
    const path = join(makeTempDir(), "agentd.lock");
    const taker = startTaker(path);
    await waitFor("the other process to take the lock", () => taker.out().includes("locked") || taker.child.exitCode !== null);
    expect(taker.out()).toBe("locked\n");
    const before = readFileSync(path, "utf8");
    const attempt = acquireInstanceLock(path);
    expect(attempt).toEqual({ acquired: false, holder: expect.objectContaining({ pid: taker.child.pid }) });
    expect(readFileSync(path, "utf8")).toBe(before);
  });

  test("the holder killed with SIGKILL: the kernel drops the lock and the next taker gets it", async () => {
    const path = join(makeTempDir(), "agentd.lock");
    const taker = startTaker(path);
    await waitFor("the other process to take the lock", () => taker.out().includes("locked") || taker.child.exitCode !== null);
    expect(acquireInstanceLock(path).acquired).toBe(false);
    taker.child.kill("SIGKILL");
    await taker.child.exited;
    const attempt = acquireInstanceLock(path);
    expect(attempt.acquired).toBe(true);
    if (attempt.acquired) attempt.lock.release();
    expect(readLockHolder(path)?.pid).toBe(process.pid);
  });

  test("the descriptor is close-on-exec, so no program the holder runs keeps the lock", () => {
    const path = join(makeTempDir(), "agentd.lock");
    const held = acquireInstanceLock(path);
    if (!held.acquired) throw new Error("the lock should be free");
    const fd = readdirSync("/proc/self/fd").find((entry) => {
      try {
        return readlinkSync(`/proc/self/fd/${entry}`) === path;
      } catch {
        return false;
      }
    });
    const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))![1]!;
    held.lock.release();
    expect(Number.parseInt(flags, 8) & 0o2000000).toBe(0o2000000);
  });
});
