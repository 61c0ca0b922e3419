import { AgentdError } from "../core/errors/index.ts";

/** Stable codes of PTY failures; clients, tools and tests match on them. */
export type PtyErrorCode =
  | "pty_unsupported"
  | "pty_spawn_failed"
  | "pty_bad_workdir"
  | "pty_session_not_found"
  | "pty_session_exited"
  | "pty_limit_reached"
  | "pty_input_too_large"
  | "pty_io_error"
  | "pty_closed";

const STATUS: Record<PtyErrorCode, number> = {
  pty_unsupported: 501,
  pty_spawn_failed: 400,
  pty_bad_workdir: 400,
  pty_session_not_found: 404,
  pty_session_exited: 409,
  pty_limit_reached: 429,
  pty_input_too_large: 413,
  pty_io_error: 500,
  pty_closed: 503,
};

export class PtyError extends AgentdError {
  declare readonly code: PtyErrorCode;

  constructor(code: PtyErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, { status: STATUS[code], details });
  }
}
