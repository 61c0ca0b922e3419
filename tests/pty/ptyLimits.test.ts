import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { setLogSink } from "../../src/core/log/index.ts";
import { ptyConfigSchema, PtyManager } from "../../src/pty/index.ts";
import { waitFor } from "../support/waitFor.ts";
import { childProcesses, expectNoLeaks, openFdCount, threadCount } from "./processAudit.ts";

const logLines: string[] = [];
setLogSink((line) => logLines.push(line));

const dataDir = makeTempDir("agentd-pty-limits-");
let manager: PtyManager | undefined;
let baselineFds: number;

function newManager(config: Record<string, unknown>): PtyManager {
  manager = new PtyManager({ dataDir, config: ptyConfigSchema().parse({ close_grace_ms: 200, ...config }) });
  return manager;
}

async function openCats(pty: PtyManager, count: number): Promise<string[]> {
  const results = await Promise.all(Array.from({ length: count }, () => pty.exec({ cmd: "cat", yield_time_ms: 250 })));
  return results.map((result) => {
    expect(result.running).toBe(true);
    return result.session_id!;
  });
}

beforeAll(async () => {
  const warm = newManager({});
  await warm.exec({ cmd: "true" });
  await warm.close();
});

beforeEach(() => {
  baselineFds = openFdCount();
  logLines.length = 0;
});

afterEach(async () => {
  await manager?.close();
  manager = undefined;
  await expectNoLeaks(baselineFds);
});

describe("session limits", () => {
  test("64 concurrent sessions all answer, without a thread per session", async () => {
    const pty = newManager({ max_sessions: 64 });
    const threadsBefore = threadCount();
    const ids = await openCats(pty, 64);
    expect(pty.list()).toHaveLength(64);
    expect(childProcesses()).toHaveLength(64);
    // Every terminal is idle and watched; a thread-pool reader would hold one thread each.
    expect(threadCount() - threadsBefore).toBeLessThan(8);
    const replies = await Promise.all(
      ids.map((id, index) => pty.writeStdin({ session_id: id, chars: `ping-${index}\n`, yield_time_ms: 500 })),
    );
    for (const [index, reply] of replies.entries()) expect(reply.output).toContain(`ping-${index}\r\nping-${index}\r\n`);
    expect(pty.healthChecks()).toEqual([
      {
        key: "pty:sessions",
        status: "warn",
        observedValue: 64,
        observedUnit: "sessions",
        output: "64 of at most 64 PTY sessions are open",
      },
    ]);
  }, 30_000);

  test("the 65th session closes the least recently used one and warns", async () => {
    const pty = newManager({ max_sessions: 64 });
    const ids = await openCats(pty, 64);
    // Use all but the first again, so the first is the least recently used.
    await Promise.all(ids.slice(1).map((id) => pty.writeStdin({ session_id: id, chars: "", yield_time_ms: 50 })));
    const result = await pty.exec({ cmd: "cat", yield_time_ms: 250 });
    expect(result.running).toBe(true);
    expect(result.warning).toContain(`closed the least recently used session ${ids[0]}`);
    const listed = pty.list().map((info) => info.id);
    expect(listed).toHaveLength(64);
    expect(listed).not.toContain(ids[0]);
    expect(listed).toContain(result.session_id!);
    expect(logLines.some((line) => line.includes('"event":"pty.limit_reached"') && line.includes(ids[0]!))).toBe(true);
  }, 30_000);

  test("an exited session is closed before older running ones; recent ones never", async () => {
    const pty = newManager({ max_sessions: 10 });
    const ids = await openCats(pty, 1);
    const exiting = await pty.exec({ cmd: "sleep 0.3", yield_time_ms: 250 });
    ids.push(exiting.session_id!, ...(await openCats(pty, 8)));
    await waitFor(
      "the exiting session to stop running",
      () => pty.list().find((info) => info.id === exiting.session_id)?.running === false,
      { timeoutMs: 5000 },
    );
    // Oldest first: cat (running), sleep (exited), then eight protected recent ones.
    const first = await pty.exec({ cmd: "cat", yield_time_ms: 250 });
    expect(first.warning).toContain(exiting.session_id!);
    const second = await pty.exec({ cmd: "cat", yield_time_ms: 250 });
    expect(second.warning).toContain(ids[0]!);
  }, 30_000);

  test("when every session is among the most recent, a new one is refused", async () => {
    const pty = newManager({ max_sessions: 8 });
    await openCats(pty, 8);
    await expect(pty.exec({ cmd: "cat" })).rejects.toMatchObject({ code: "pty_limit_reached", status: 429 });
    expect(pty.list()).toHaveLength(8);
  }, 30_000);

  test("idle sessions are closed and reaped after the idle timeout", async () => {
    const pty = newManager({ idle_timeout_s: 1 });
    const [id] = await openCats(pty, 1);
    await waitFor("no session listed", () => pty.list().length === 0, { timeoutMs: 5000 });
    await waitFor("no child process left", () => childProcesses().length === 0, { timeoutMs: 3000 });
    expect(logLines.some((line) => line.includes('"event":"pty.reaped"') && line.includes(id!))).toBe(true);
  }, 15_000);
});

afterAll(() => removeTempDirs());
