import { AgentdError, type ErrorCode } from "../core/errors/index.ts";

/** Stable codes of PTY failures (the registry's `pty_*`); clients, tools and tests match on them. */
export type PtyErrorCode = Extract<ErrorCode, `pty_${string}`>;

export class PtyError extends AgentdError {
  declare readonly code: PtyErrorCode;

  constructor(code: PtyErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, { details });
  }
}
