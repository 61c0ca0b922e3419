import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { runCommand } from "../../../src/core/process/index.ts";
import { isProcessAlive, waitFor } from "../../support/waitFor.ts";

describe("runCommand", () => {
  test("returns the exit code and the output of both streams", async () => {
    const result = await runCommand({ argv: ["sh", "-c", "echo out; echo err >&2; exit 3"], timeoutMs: 10_000 });
    expect(result).toMatchObject({ exit_code: 3, signal: null, timed_out: false, cancelled: false, truncated: false });
    expect(result.output).toContain("out\n");
    expect(result.output).toContain("err\n");
  });

  test("a timeout stops the whole group: a grandchild holding the pipe cannot keep it waiting", async () => {
    // A grandchild that outlives the test's own timeout: a run that waited for it would never return.
    const result = await runCommand({ argv: ["sh", "-c", "sleep 1000 & echo $!; wait"], timeoutMs: 300, graceMs: 200 });
    expect(result.timed_out).toBe(true);
    const grandchild = Number(result.output.trim().split("\n")[0]);
    expect(grandchild).toBeGreaterThan(0);
    await waitFor("the grandchild to be gone", () => !isProcessAlive(grandchild) || undefined, { timeoutMs: 5000 });
  });

  test("cancel stops it too", async () => {
    const controller = new AbortController();
    const running = runCommand({ argv: ["sleep", "30"], timeoutMs: 30_000, signal: controller.signal, graceMs: 200 });
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ cancelled: true, exit_code: null, signal: "SIGTERM" });
  });

  test("a flood keeps only the tail, bounded", async () => {
    const result = await runCommand({
      argv: ["sh", "-c", "yes | head -c 5000000; echo; echo the-end"],
      timeoutMs: 20_000,
      maxOutputBytes: 4096,
    });
    expect(result.exit_code).toBe(0);
    expect(result.truncated).toBe(true);
    expect(result.output.length).toBeLessThanOrEqual(4096);
    expect(result.output.trimEnd().endsWith("the-end")).toBe(true);
  });
});

describe("runCommand leaves nothing behind", () => {
  test("a group member that ignores SIGTERM still gets the SIGKILL after the grace", async () => {
    const result = await runCommand({
      argv: ["sh", "-c", "(trap '' TERM; echo member=$(sh -c 'echo $PPID'); sleep 40) & wait"],
      timeoutMs: 300,
      graceMs: 300,
    });
    expect(result.timed_out).toBe(true);
    const member = Number(/member=(\d+)/.exec(result.output)?.[1]);
    expect(member).toBeGreaterThan(0);
    await waitFor("the member that ignored SIGTERM to be killed", () => !isProcessAlive(member) || undefined, { timeoutMs: 5000 });
  });

  test("a background child holding the pipes does not keep them open once the command exited", async () => {
    const fds = () => readdirSync("/proc/self/fd").length;
    const before = fds();
    const leftovers: number[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await runCommand({ argv: ["sh", "-c", "(sleep 30; echo late) & echo started $$"], timeoutMs: 10_000 });
      const match = /^started (\d+)$/.exec(result.output.trim());
      expect(match).not.toBeNull();
      leftovers.push(Number(match![1]));
    }
    await waitFor("the pipes to be closed", () => fds() <= before || undefined, { timeoutMs: 5000 });
    // Each command led its own process group: what it left behind goes with the group.
    for (const group of leftovers) process.kill(-group, "SIGKILL");
  });

  test("an already aborted signal stops the command at once", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await runCommand({ argv: ["sleep", "5"], timeoutMs: 30_000, signal: controller.signal, graceMs: 200 });
    // A sleep left to run would have exited 0.
    expect(result).toMatchObject({ cancelled: true, exit_code: null });
  });
});
