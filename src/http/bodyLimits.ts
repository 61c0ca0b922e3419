import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Mount } from "../core/capability.ts";
import { AgentdError } from "../core/errors/index.ts";
import { errorResponse } from "./errorResponse.ts";

function tooLarge(c: Context, maxSize: number): Response {
  return errorResponse(c, new AgentdError("body_too_large", `Request body is larger than the limit of ${maxSize} bytes`));
}

function underPath(path: string, prefix: string): boolean {
  return prefix === "/" || path === prefix || path.startsWith(`${prefix}/`);
}

interface Limit {
  maxSize: number;
  /** Hono's limit, which counts a body sent without Content-Length as it reads it. */
  streamed: ReturnType<typeof bodyLimit>;
}

function limitOf(maxSize: number): Limit {
  return { maxSize, streamed: bodyLimit({ maxSize, onError: (c) => tooLarge(c, maxSize) }) };
}

/** What the body limit says of a request before it runs: refused (413), read under a limit, or nothing to do. */
export type BodyLimitVerdict = { refused: Response } | { streamed: MiddlewareHandler } | undefined;

/**
 * One body limit per request, the one of the mount that serves it: a limit per mount as a
 * middleware would stack (a root mount's limit would also cover /v1, overriding the proxy's).
 * A declared Content-Length is judged from the header alone, without touching the body (Bun then
 * reads it the fast way), and without one more async step; a body without one is read under Hono's
 * limit, which counts it as it comes.
 */
export function bodyLimits(mounts: readonly Mount[], defaultBytes: number): (c: Context) => BodyLimitVerdict {
  const own = mounts
    .filter((mount) => mount.bodyLimitBytes !== undefined)
    .sort((a, b) => b.path.length - a.path.length)
    .map((mount) => ({ path: mount.path, limit: limitOf(mount.bodyLimitBytes!) }));
  const fallback = limitOf(defaultBytes);
  return (c) => {
    const path = c.req.path;
    const limit = own.find((entry) => underPath(path, entry.path))?.limit ?? fallback;
    const headers = c.req.raw.headers;
    const declared = headers.get("content-length");
    if (declared === null || headers.has("transfer-encoding")) return { streamed: limit.streamed };
    return Number.parseInt(declared, 10) > limit.maxSize ? { refused: tooLarge(c, limit.maxSize) } : undefined;
  };
}
