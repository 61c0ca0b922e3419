import type { MiddlewareHandler } from "hono";
import { getConnInfo } from "hono/bun";
import { errorBody } from "./errorResponse.ts";
import { isLoopbackAddress } from "./token.ts";

/** Admin routes (the watchdog's breaker and timeout controls) answer loopback callers only. */
export function loopbackOnly(): MiddlewareHandler {
  return async (c, next) => {
    const address = getConnInfo(c).remote.address;
    if (address && isLoopbackAddress(address)) return next();
    return c.json(errorBody("forbidden", "This route only answers requests from the local host"), 403);
  };
}
