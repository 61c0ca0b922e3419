import { AgentdError, type AgentdErrorOptions, type ErrorCode } from "../core/errors/index.ts";

/** Stable codes of hop failures (the registry's `hop_*`); the CLI, the agent's tools and tests match on them. */
export type HopErrorCode = Extract<ErrorCode, `hop_${string}`>;

export class HopError extends AgentdError {
  declare readonly code: HopErrorCode;

  constructor(code: HopErrorCode, message: string, options: AgentdErrorOptions = {}) {
    super(code, message, options);
  }
}
