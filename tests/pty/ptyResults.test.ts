import { describe, expect, test } from "bun:test";
import { sessionsHealth } from "../../src/pty/ptyHealth.ts";
import { closeResult, commandResult, type ReadOutcome, sessionInfo } from "../../src/pty/ptyResults.ts";

const rendered = { output: "hello\n", truncated: false, originalBytes: 6 };
const read: ReadOutcome = {
  sessionId: "abc",
  taken: { bytes: new TextEncoder().encode("hello\n"), droppedBytes: 0 },
  rendered,
  status: undefined,
  outputFile: undefined,
  wallMs: 12.6,
  warning: undefined,
};

describe("commandResult", () => {
  test("a running command keeps its session id and reports no exit code, nor keys it has no value for", () => {
    expect(commandResult(read)).toEqual({
      session_id: "abc",
      output: "hello\n",
      running: true,
      exit_code: null,
      truncated: false,
      original_bytes: 6,
      wall_ms: 13,
    });
  });

  test("an exited command gives no session id back; its signal, dropped bytes, full copy and warning are reported", () => {
    const result = commandResult({
      ...read,
      taken: { ...read.taken, droppedBytes: 4096 },
      rendered: { ...rendered, truncated: true, originalBytes: 90_000 },
      status: { exitCode: 137, signal: "SIGKILL" },
      outputFile: "/data/tool-output/pty-abc.log",
      warning: "Session limit (2) reached",
    });
    expect(result).toMatchObject({
      session_id: null,
      running: false,
      exit_code: 137,
      signal: "SIGKILL",
      truncated: true,
      original_bytes: 90_000,
      dropped_bytes: 4096,
      output_file: "/data/tool-output/pty-abc.log",
      warning: "Session limit (2) reached",
    });
  });

  test("a plain exit has no signal key", () => {
    expect(commandResult({ ...read, status: { exitCode: 0 } })).not.toHaveProperty("signal");
  });
});

describe("closeResult", () => {
  test("a session closed before it exited has a null exit code", () => {
    expect(closeResult("abc", undefined, rendered)).toEqual({ session_id: "abc", exit_code: null, output: "hello\n", truncated: false });
    expect(closeResult("abc", { exitCode: 129, signal: "SIGHUP" }, rendered)).toMatchObject({ exit_code: 129, signal: "SIGHUP" });
  });
});

describe("sessionInfo", () => {
  test("idle time in whole seconds, times as ISO 8601, null before the program wrote anything", () => {
    const session = {
      id: "abc",
      cmd: "top",
      pid: 4242,
      startedAt: new Date("2026-01-01T00:00:00.000Z"),
      running: true,
      exitStatus: undefined,
      lastUsedAt: 1_000,
      bytesOut: 0,
      lastOutputAt: undefined,
    };
    expect(sessionInfo(session, 3_999)).toEqual({
      id: "abc",
      cmd: "top",
      pid: 4242,
      started: "2026-01-01T00:00:00.000Z",
      running: true,
      exit_code: null,
      idle_s: 2,
      bytes_out: 0,
      last_output_at: null,
    });
    const exited = sessionInfo({ ...session, running: false, exitStatus: { exitCode: 3 }, bytesOut: 10, lastOutputAt: 0 }, 1_000);
    expect(exited).toMatchObject({ running: false, exit_code: 3, bytes_out: 10, last_output_at: "1970-01-01T00:00:00.000Z" });
  });
});

describe("sessionsHealth", () => {
  test("passes below 90% of the limit, warns from it with a sentence", () => {
    expect(sessionsHealth(8, 10)).toEqual({ key: "pty:sessions", status: "pass", observedValue: 8, observedUnit: "sessions" });
    expect(sessionsHealth(9, 10)).toEqual({
      key: "pty:sessions",
      status: "warn",
      observedValue: 9,
      observedUnit: "sessions",
      output: "9 of at most 10 PTY sessions are open",
    });
    // A limit of one: the first session is already near it.
    expect(sessionsHealth(1, 1).status).toBe("warn");
    expect(sessionsHealth(0, 1).status).toBe("pass");
  });
});
