import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { AgentdError, asDiskFull, type ErrorCode, errorBody } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";

/** The JSON error answer of every route, guard and middleware: the error's status and body. */
export function errorResponse(c: Context, error: AgentdError): Response {
  return c.json(errorBody(error), error.status as ContentfulStatusCode);
}

/** Turns any thrown value into the JSON error; unknown errors are logged and never shown as a stack. */
export function createErrorHandler(log: Logger) {
  return (error: Error, c: Context): Response => {
    const full = asDiskFull(error);
    if (full) {
      log.warn("http.disk_full", { method: c.req.method, path: c.req.path, file: full.path, error: full.cause ?? full });
      return errorResponse(c, full);
    }
    if (error instanceof AgentdError) return errorResponse(c, error);
    if (error instanceof HTTPException) return errorResponse(c, fromHttpException(error));
    log.error("http.unhandled_error", { method: c.req.method, path: c.req.path, error });
    return errorResponse(c, new AgentdError("internal_error", "Internal error; see the agentd log"));
  };
}

const HTTP_EXCEPTION_CODES: Partial<Record<number, ErrorCode>> = { 401: "unauthorized", 413: "body_too_large" };

function fromHttpException(error: HTTPException): AgentdError {
  const code = HTTP_EXCEPTION_CODES[error.status];
  const message = error.message || "Request failed";
  return code ? new AgentdError(code, message) : new AgentdError("http_error", message, { status: error.status });
}
