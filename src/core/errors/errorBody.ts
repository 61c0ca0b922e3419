import { AgentdError } from "./agentdError.ts";
import { isErrorCode, isRelayed } from "./errorCodes.ts";
import { type ErrorType, errorTypeFor } from "./errorType.ts";

/** The one JSON error shape of every route (OpenAI's, so SDK clients read it as well). */
export interface ErrorBody {
  error: { message: string; type: ErrorType; param: string | null; code: string; details?: Record<string, unknown> };
}

export function errorBody(error: AgentdError): ErrorBody {
  return {
    error: {
      message: error.message,
      type: errorTypeFor(error.status),
      param: error.param ?? null,
      code: error.code,
      ...(error.details ? { details: error.details } : {}),
    },
  };
}

/**
 * The error another agentd answered with (the daemon to the CLI, a remote to its hop) when `parsed`
 * is an error body with a code this build knows; undefined otherwise, for the caller to describe.
 */
export function errorFromBody(parsed: unknown, status: number, suffix = ""): AgentdError | undefined {
  const error = (parsed as { error?: unknown } | null)?.error as Partial<ErrorBody["error"]> | undefined;
  if (!error || !isErrorCode(error.code) || typeof error.message !== "string") return undefined;
  const options = { param: error.param ?? undefined, details: error.details };
  const message = error.message + suffix;
  return isRelayed(error.code)
    ? new AgentdError(error.code, message, { ...options, status })
    : new AgentdError(error.code, message, options);
}
