import type { MiddlewareHandler } from "hono";
import { getConnInfo } from "hono/bun";
import { AgentdError } from "../core/errors/index.ts";
import { errorResponse } from "./errorResponse.ts";
import { isLoopbackAddress } from "./token.ts";

/** Admin routes (the watchdog's breaker and timeout controls) answer loopback callers only. */
export function loopbackOnly(): MiddlewareHandler {
  return async (c, next) => {
    const address = getConnInfo(c).remote.address;
    if (address && isLoopbackAddress(address)) return next();
    return errorResponse(c, new AgentdError("forbidden", "This route only answers requests from the local host"));
  };
}
