import { type ErrorCode, type RelayedErrorCode, statusOf } from "./errorCodes.ts";

export interface AgentdErrorOptions {
  cause?: unknown;
  details?: Record<string, unknown>;
  /** The request field the error is about (OpenAI's `param`), e.g. `tools[1].function.name`. */
  param?: string;
}

/**
 * Base of every error agentd turns into a user-facing form. `code` is stable (clients and tests
 * match on it) and comes from the registry, which also gives `status`; only a relayed code takes
 * the status of the answer it relays.
 */
export class AgentdError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly param?: string;
  readonly details?: Record<string, unknown>;

  constructor(code: RelayedErrorCode, message: string, options: AgentdErrorOptions & { status: number });
  constructor(code: ErrorCode, message: string, options?: AgentdErrorOptions);
  constructor(code: ErrorCode, message: string, options: AgentdErrorOptions & { status?: number } = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = options.status ?? statusOf(code);
    this.param = options.param;
    this.details = options.details;
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
