import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { setLogSink } from "../../src/core/log/index.ts";
import { ptyConfigSchema, PtyManager, type PtyCommandResult } from "../../src/pty/index.ts";
import { ptySessionRow } from "../../src/status/statusRows.ts";
import { waitFor } from "../support/waitFor.ts";
import { expectNoLeaks, isAlive, openFdCount } from "./processAudit.ts";

setLogSink(() => {});

let dataDir: string;
let manager: PtyManager;
let baselineFds: number;

function newManager(config: Record<string, unknown> = {}): PtyManager {
  return new PtyManager({ dataDir, config: ptyConfigSchema().parse({ close_grace_ms: 200, ...config }) });
}

/**
 * Types `chars` into a session, then keeps reading (empty writes) until `done` holds for everything
 * read so far (starting from `seen`), the process exits, or a deadline passes.
 */
async function converse(
  id: string,
  chars: string,
  done: (output: string) => boolean,
  seen = "",
  timeoutMs = 4000,
): Promise<{ output: string; last: PtyCommandResult }> {
  const deadline = Date.now() + timeoutMs;
  let output = seen;
  let next = chars;
  for (;;) {
    const last = await manager.writeStdin({ session_id: id, chars: next, yield_time_ms: 50 });
    next = "";
    output += last.output;
    if (done(output) || !last.running || Date.now() > deadline) return { output, last };
  }
}

beforeAll(async () => {
  // Warm up lazily opened runtime fds so the per-test fd baseline is stable.
  dataDir = makeTempDir("agentd-pty-");
  const warm = newManager();
  await warm.exec({ cmd: "true" });
  await warm.close();
});

beforeEach(() => {
  baselineFds = openFdCount();
  manager = newManager();
});

afterEach(async () => {
  await manager.close();
  await expectNoLeaks(baselineFds);
  rmSync(join(dataDir, "tool-output"), { recursive: true, force: true });
});

describe("exec_command", () => {
  test("returns output and exit codes 0, 3 and 127 as soon as the command exits", async () => {
    const ok = await manager.exec({ cmd: "echo hello", yield_time_ms: 30_000 });
    expect(ok).toMatchObject({ session_id: null, output: "hello\r\n", running: false, exit_code: 0, truncated: false, original_bytes: 7 });
    // Returned at the exit, not at the yield deadline it was given (an ordering, not a speed).
    expect(ok.wall_ms).toBeLessThan(30_000);
    expect((await manager.exec({ cmd: "exit 3" })).exit_code).toBe(3);
    const missing = await manager.exec({ cmd: "no-such-command-agentd" });
    expect(missing.exit_code).toBe(127);
    expect(missing.output).toContain("not found");
    expect(manager.list()).toEqual([]);
  });

  test("runs in workdir with the caller's env over the pager defaults", async () => {
    const result = await manager.exec({
      cmd: 'pwd; echo "$FOO|$PAGER|$GIT_PAGER|$NO_COLOR|$TERM"',
      workdir: "/tmp",
      env: { FOO: "bar", PAGER: "less" },
    });
    expect(result.output).toBe("/tmp\r\nbar|less|cat|1|xterm-256color\r\n");
  });

  test("the daemon's API keys are not in the child's environment", async () => {
    process.env.AGENTD_PTY_TEST_API_KEY = "sk-must-not-leak";
    try {
      const result = await manager.exec({ cmd: "env" });
      expect(result.exit_code).toBe(0);
      expect(result.output).toContain("PATH=");
      expect(result.output).not.toContain("sk-must-not-leak");
    } finally {
      delete process.env.AGENTD_PTY_TEST_API_KEY;
    }
  });

  test("refuses a workdir that does not exist", async () => {
    await expect(manager.exec({ cmd: "true", workdir: "/nonexistent/agentd" })).rejects.toMatchObject({
      code: "pty_bad_workdir",
      status: 400,
    });
  });

  test("the child has the pty as its controlling terminal and leads its own session", async () => {
    const result = await manager.exec({ cmd: 'tty; ps -o tty=,sid= -p $$; echo "pid=$$"' });
    const [tty, psLine, pidLine] = result.output.trim().split("\r\n");
    expect(tty).toMatch(/^\/dev\/pts\/\d+$/);
    const [psTty, sid] = psLine!.trim().split(/\s+/);
    expect(`/dev/${psTty}`).toBe(tty!);
    expect(`pid=${sid}`).toBe(pidLine!);
  });

  test("returns at exit even when a background job still holds the terminal", async () => {
    const result = await manager.exec({ cmd: "sleep 30 & echo bg=$!", yield_time_ms: 10_000 });
    expect(result.exit_code).toBe(0);
    // Returned at the exit, before the yield deadline; the job would hold the terminal for 30 s.
    expect(result.wall_ms).toBeLessThan(10_000);
    const bgPid = Number(/bg=(\d+)/.exec(result.output)![1]);
    // Closing the master hung the terminal up: the job got SIGHUP.
    await waitFor("the background process to end", () => !isAlive(bgPid), { timeoutMs: 5000 });
  });

  test("a running command stays a session, listed with its details", async () => {
    const result = await manager.exec({ cmd: "cat", yield_time_ms: 250 });
    expect(result).toMatchObject({ running: true, exit_code: null, output: "" });
    const [info] = manager.list();
    expect(info).toMatchObject({ id: result.session_id!, cmd: "cat", running: true, exit_code: null, bytes_out: 0 });
    expect(info!.pid).toBeGreaterThan(0);
    expect(Date.parse(info!.started)).toBeLessThanOrEqual(Date.now());
    expect(info!.last_output_at).toBeNull();
  });

  test("last_output_at is when the program last wrote, not when a call last used the session", async () => {
    const result = await manager.exec({ cmd: "echo one; exec cat", yield_time_ms: 250 });
    expect(result.output).toContain("one");
    const wrote = Date.parse(manager.list()[0]!.last_output_at!);
    expect(wrote).toBeLessThanOrEqual(Date.now());
    await Bun.sleep(1100);
    // A call that reads nothing new (cat echoes nothing without input) uses the session, yet writes nothing.
    await manager.writeStdin({ session_id: result.session_id!, chars: "", yield_time_ms: 50 });
    const [info] = manager.list();
    expect(info!.idle_s).toBe(0);
    expect(Date.parse(info!.last_output_at!)).toBe(wrote);
    expect(ptySessionRow(info!).last_output_at).toBe(wrote);
    await manager.writeStdin({ session_id: result.session_id!, chars: "two\n", yield_time_ms: 250 });
    expect(Date.parse(manager.list()[0]!.last_output_at!)).toBeGreaterThanOrEqual(wrote + 1000);
  });
});

describe("write_stdin", () => {
  test("drives a python3 REPL", async () => {
    const started = await manager.exec({ cmd: "python3 -i -q", yield_time_ms: 250 });
    const id = started.session_id!;
    expect((await converse(id, "", (out) => out.includes(">>> "), started.output)).output).toContain(">>> ");
    const { output } = await converse(id, "print(6*7)\n", (out) => out.includes("42\r\n"));
    expect(output).toContain("42\r\n");
    const exited = await manager.writeStdin({ session_id: id, chars: "exit()\n", yield_time_ms: 10_000 });
    expect(exited).toMatchObject({ running: false, exit_code: 0, session_id: null });
    expect(manager.list()).toEqual([]);
  });

  test("cat echoes input back, and Ctrl-D ends it", async () => {
    const id = (await manager.exec({ cmd: "cat", yield_time_ms: 250 })).session_id!;
    // Once by the terminal's echo, once by cat.
    expect((await converse(id, "hello\n", (out) => out === "hello\r\nhello\r\n")).output).toBe("hello\r\nhello\r\n");
    const ended = await manager.writeStdin({ session_id: id, chars: "\u0004", yield_time_ms: 10_000 });
    expect(ended).toMatchObject({ running: false, exit_code: 0 });
  });

  test("stty size follows cols/rows at start and after a resize", async () => {
    const started = await manager.exec({ cmd: "stty size; read _; stty size; read _", cols: 100, rows: 30, yield_time_ms: 250 });
    const id = started.session_id!;
    expect((await converse(id, "", (out) => out.includes("30 100"), started.output)).output).toContain("30 100\r\n");
    await manager.writeStdin({ session_id: id, chars: "", cols: 132, rows: 43, yield_time_ms: 50 });
    expect((await converse(id, "\n", (out) => out.includes("43 132"))).output).toContain("43 132\r\n");
  });

  test("Ctrl-C interrupts sleep 100", async () => {
    const id = (await manager.exec({ cmd: "sleep 100", yield_time_ms: 250 })).session_id!;
    const result = await manager.writeStdin({ session_id: id, chars: "\u0003", yield_time_ms: 10_000 });
    expect(result).toMatchObject({ running: false, exit_code: 130, signal: "SIGINT" });
    // Returned at the exit, before the yield deadline it was given.
    expect(result.wall_ms).toBeLessThan(10_000);
  });

  test("answers a getpass prompt without the secret being echoed", async () => {
    const script = "import getpass; s = getpass.getpass('Password: '); print('length', len(s))";
    const started = await manager.exec({ cmd: `python3 -c "${script}"`, yield_time_ms: 250 });
    const id = started.session_id!;
    expect((await converse(id, "", (out) => out.includes("Password: "), started.output)).output).toContain("Password: ");
    const result = await manager.writeStdin({ session_id: id, chars: "hunter22\n", yield_time_ms: 10_000 });
    expect(result.exit_code).toBe(0);
    expect(result.output).toContain("length 8");
    expect(result.output).not.toContain("hunter22");
  });

  test("an unknown session id is a clear error", async () => {
    await expect(manager.writeStdin({ session_id: "nope", chars: "x" })).rejects.toMatchObject({
      code: "pty_session_not_found",
      status: 404,
    });
    await expect(manager.closeSession({ session_id: "nope" })).rejects.toMatchObject({ code: "pty_session_not_found" });
  });

  test("output of a process that exited in the background is returned once, then the session is gone", async () => {
    const id = (await manager.exec({ cmd: "sleep 0.5; echo done; exit 4", yield_time_ms: 250 })).session_id!;
    await waitFor("the session to stop running", () => manager.list()[0]?.running === false, { timeoutMs: 5000 });
    const result = await manager.writeStdin({ session_id: id, chars: "ignored\n" });
    expect(result).toMatchObject({ running: false, exit_code: 4, warning: "The process has exited; the input was not sent" });
    expect(result.output).toContain("done\r\n");
    expect(manager.list()).toEqual([]);
  });
});

describe("close_session", () => {
  test("a child that ignores SIGHUP and SIGTERM is killed by the escalation", async () => {
    const started = await manager.exec({ cmd: "trap '' HUP TERM; echo ready; while :; do sleep 0.05; done", yield_time_ms: 250 });
    const id = started.session_id!;
    expect((await converse(id, "", (out) => out.includes("ready"), started.output)).output).toContain("ready");
    const result = await manager.closeSession({ session_id: id });
    expect(result).toMatchObject({ session_id: id, exit_code: 137, signal: "SIGKILL" });
    expect(manager.list()).toEqual([]);
  });

  test("kills a background grandchild with the group", async () => {
    const started = await manager.exec({ cmd: "sleep 300 & echo bg=$!; wait", yield_time_ms: 250 });
    const id = started.session_id!;
    const { output } = await converse(id, "", (out) => /bg=\d+/.test(out), started.output);
    const grandchild = Number(/bg=(\d+)/.exec(output)![1]);
    expect(isAlive(grandchild)).toBe(true);
    const result = await manager.closeSession({ session_id: id });
    expect(result.signal).toBe("SIGHUP");
    await waitFor("the grandchild to end", () => !isAlive(grandchild), { timeoutMs: 5000 });
  });

  test("force sends SIGKILL at once", async () => {
    // Without force, HUP, TERM and KILL would each wait out this grace (90 s, past the test's
    // timeout): a close that returns at all skipped them.
    await manager.close();
    manager = newManager({ close_grace_ms: 30_000 });
    const id = (await manager.exec({ cmd: "trap '' HUP TERM; sleep 100", yield_time_ms: 250 })).session_id!;
    expect(await manager.closeSession({ session_id: id, force: true })).toMatchObject({ exit_code: 137, signal: "SIGKILL" });
  });

  test("closing the manager ends every session, stubborn ones included", async () => {
    await manager.exec({ cmd: "cat", yield_time_ms: 250 });
    await manager.exec({ cmd: "trap '' HUP TERM; sleep 100", yield_time_ms: 250 });
    await manager.exec({ cmd: "sleep 100 & sleep 100", yield_time_ms: 250 });
    expect(manager.list()).toHaveLength(3);
    await manager.close();
    expect(manager.list()).toEqual([]);
    await expect(manager.exec({ cmd: "true" })).rejects.toMatchObject({ code: "pty_closed" });
  });
});

describe("output bounds", () => {
  test("a 50 MB flood stays within the buffer bound; the full read of a truncated result is kept on disk", async () => {
    await manager.close();
    manager = newManager({ buffer_bytes: 65_536 });
    // 1000-byte lines: the kernel turns each "\n" into "\r\n" one write at a time (~0.3 µs each), so 25 M
    // lines of "y" cost the writer ~8 s of CPU in the tty layer alone, over the 30 s yield on a loaded box.
    const cmd = 'yes "$(printf %0999d 0)" | head -c 50000000; echo; echo END';
    const result = await manager.exec({ cmd, yield_time_ms: 30_000, max_output_tokens: 1000 });
    expect(result.exit_code).toBe(0);
    expect(result.original_bytes).toBeLessThanOrEqual(65_536);
    // Every byte is counted, kept or dropped unread: 50 000 lines of 1001 bytes ("\r\n"), then "\r\n" and "END\r\n".
    expect(result.original_bytes + result.dropped_bytes!).toBe(50_050_007);
    expect(result.truncated).toBe(true);
    expect(result.output.length).toBeLessThan(5000);
    expect(result.output).toContain("bytes of output truncated");
    expect(result.output.endsWith("END\r\n")).toBe(true);
    expect(statSync(result.output_file!).size).toBe(result.original_bytes);
    expect(statSync(result.output_file!).mode & 0o777).toBe(0o600);
  }, 60_000);

  test("strip_ansi removes colours; by default they are kept byte-exact", async () => {
    const cmd = "printf '\\033[31mred\\033[0m\\n'";
    expect((await manager.exec({ cmd })).output).toBe("\x1b[31mred\x1b[0m\r\n");
    expect((await manager.exec({ cmd, strip_ansi: true })).output).toBe("red\r\n");
  });
});

afterAll(() => removeTempDirs());
