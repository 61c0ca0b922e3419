import type { TakenOutput } from "./outputBuffer.ts";
import type { PtyCloseResult, PtyCommandResult, PtySessionInfo } from "./ptySchemas.ts";
import type { RenderedOutput } from "./renderOutput.ts";
import type { ExitStatus } from "./waitStatus.ts";

/** The answers of the exec_command family, built from what a session reports: a read, a close, a row of the list. */

export interface ReadOutcome {
  sessionId: string;
  taken: TakenOutput;
  rendered: RenderedOutput;
  /** Set once the process has exited: the session is then gone and its id is not given back. */
  status: ExitStatus | undefined;
  outputFile: string | undefined;
  wallMs: number;
  warning: string | undefined;
}

export function commandResult(read: ReadOutcome): PtyCommandResult {
  const { status, rendered } = read;
  return {
    session_id: status ? null : read.sessionId,
    output: rendered.output,
    running: status === undefined,
    exit_code: status?.exitCode ?? null,
    ...(status?.signal ? { signal: status.signal } : {}),
    truncated: rendered.truncated,
    original_bytes: rendered.originalBytes,
    ...(read.taken.droppedBytes > 0 ? { dropped_bytes: read.taken.droppedBytes } : {}),
    ...(read.outputFile ? { output_file: read.outputFile } : {}),
    wall_ms: Math.round(read.wallMs),
    ...(read.warning ? { warning: read.warning } : {}),
  };
}

export function closeResult(sessionId: string, status: ExitStatus | undefined, rendered: RenderedOutput): PtyCloseResult {
  return {
    session_id: sessionId,
    exit_code: status?.exitCode ?? null,
    ...(status?.signal ? { signal: status.signal } : {}),
    output: rendered.output,
    truncated: rendered.truncated,
  };
}

/** What list_sessions needs of a session. */
export interface ListedSession {
  id: string;
  cmd: string;
  pid: number;
  startedAt: Date;
  running: boolean;
  exitStatus: ExitStatus | undefined;
  lastUsedAt: number;
  bytesOut: number;
  lastOutputAt: number | undefined;
}

export function sessionInfo(session: ListedSession, now: number): PtySessionInfo {
  return {
    id: session.id,
    cmd: session.cmd,
    pid: session.pid,
    started: session.startedAt.toISOString(),
    running: session.running,
    exit_code: session.exitStatus?.exitCode ?? null,
    idle_s: Math.floor((now - session.lastUsedAt) / 1000),
    bytes_out: session.bytesOut,
    last_output_at: session.lastOutputAt === undefined ? null : new Date(session.lastOutputAt).toISOString(),
  };
}
