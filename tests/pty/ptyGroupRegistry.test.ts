import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { killOrphanedPtyGroups, PtyGroupRegistry } from "../../src/pty/ptyGroupRegistry.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";

afterEach(() => removeTempDirs());

/** A process group whose leader exits at once, leaving a member behind (like a shell's background job). */
async function groupWithoutLeader(): Promise<{ leader: number; member: number }> {
  const child = Bun.spawn(["sh", "-c", "sleep 30 >/dev/null & echo $!"], { stdout: "pipe", detached: true });
  const member = Number((await new Response(child.stdout).text()).trim());
  await child.exited;
  return { leader: child.pid, member };
}

describe("the PTY group registry", () => {
  test("a group whose leader is gone is still ended, its members included", async () => {
    const dir = makeTempDir();
    const { leader, member } = await groupWithoutLeader();
    writeFileSync(join(dir, String(leader)), "12345");
    expect(isProcessAlive(member)).toBe(true);
    expect(killOrphanedPtyGroups(dir)).toEqual([leader]);
    await waitFor("the member to be gone", () => !isProcessAlive(member) || undefined, { timeoutMs: 5000 });
  });

  test("a live process whose start time differs (a reused pid) is never signalled", async () => {
    const dir = makeTempDir();
    const other = Bun.spawn(["sleep", "30"], { detached: true });
    try {
      writeFileSync(join(dir, String(other.pid)), "1");
      expect(killOrphanedPtyGroups(dir)).toEqual([]);
      expect(isProcessAlive(other.pid)).toBe(true);
    } finally {
      other.kill("SIGKILL");
    }
  });

  test("add records a live leader's start time, remove forgets it", () => {
    const dir = makeTempDir();
    const registry = new PtyGroupRegistry(dir);
    registry.add(process.pid);
    registry.remove(process.pid);
    expect(killOrphanedPtyGroups(dir)).toEqual([]);
  });
});
