import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { AgentdError, asDiskFull } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";

/** The one JSON error shape of every route (OpenAI's, so SDK clients read it as well). */
export interface ErrorBody {
  error: { code: string; message: string; type: string; param?: string | null; details?: Record<string, unknown> };
}

export function errorBody(code: string, message: string, details?: Record<string, unknown>): ErrorBody {
  return { error: { code, message, type: errorType(code), ...(details ? { details } : {}) } };
}

function errorType(code: string): string {
  if (code === "unauthorized") return "authentication_error";
  if (code === "no_provider" || code === "upstream_error" || code === "internal_error" || code === "disk_full") return "server_error";
  return "invalid_request_error";
}

/** Turns any thrown value into the JSON error; unknown errors are logged and never shown as a stack. */
export function createErrorHandler(log: Logger) {
  return (error: Error, c: Context): Response => {
    const full = asDiskFull(error);
    if (full) {
      log.warn("http.disk_full", { method: c.req.method, path: c.req.path, file: full.path, error: full.cause ?? full });
      return c.json(errorBody(full.code, full.message, full.details), 507);
    }
    if (error instanceof AgentdError) {
      return c.json(errorBody(error.code, error.message, error.details), error.status as ContentfulStatusCode);
    }
    if (error instanceof HTTPException) {
      const status = error.status;
      const code = status === 413 ? "body_too_large" : status === 401 ? "unauthorized" : "http_error";
      return c.json(errorBody(code, error.message || "Request failed"), status);
    }
    log.error("http.unhandled_error", { method: c.req.method, path: c.req.path, error });
    return c.json(errorBody("internal_error", "Internal error; see the agentd log"), 500);
  };
}
