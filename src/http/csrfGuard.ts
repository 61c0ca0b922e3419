import type { Context, MiddlewareHandler } from "hono";
import { AgentdError } from "../core/errors/index.ts";
import { errorResponse } from "./errorResponse.ts";
import { checkMiddleware } from "./requestGate.ts";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export type CsrfVerdict = { allowed: true } | { allowed: false; reason: string };

/**
 * Decides whether a state-changing request may come from where it says. An Origin that is present
 * must be this host, whatever Sec-Fetch-Site claims (a client other than a browser may send any
 * pair); without one, Sec-Fetch-Site decides for browsers. A request with neither comes from a
 * program (curl, the CLI, an SDK) that holds the token itself.
 */
export function judgeRequestOrigin(headers: { secFetchSite?: string; origin?: string; host?: string }): CsrfVerdict {
  const origin = headers.origin;
  if (origin !== undefined) {
    if (origin === "null") return { allowed: false, reason: "Origin is null" };
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      return { allowed: false, reason: `Origin "${origin}" is not a URL` };
    }
    if (originHost !== headers.host)
      return { allowed: false, reason: `Origin ${origin} is not this host (${headers.host ?? "no Host header"})` };
  }
  const site = headers.secFetchSite?.toLowerCase();
  if (site && site !== "same-origin" && site !== "none") return { allowed: false, reason: `Sec-Fetch-Site is ${site}` };
  return { allowed: true };
}

/** Refuses cross-site POST/PUT/PATCH/DELETE with 403 `csrf_rejected`; reads are never blocked. */
export function sameOriginCheck(c: Context): Response | undefined {
  if (SAFE_METHODS.has(c.req.method)) return undefined;
  const origin = c.req.header("origin");
  const secFetchSite = c.req.header("sec-fetch-site");
  // A program's request (an SDK, curl, the CLI: the proxy's traffic) carries neither: allowed without judging the host.
  if (origin === undefined && secFetchSite === undefined) return undefined;
  const verdict = judgeRequestOrigin({ secFetchSite, origin, host: c.req.header("host") ?? new URL(c.req.url).host });
  if (verdict.allowed) return undefined;
  return errorResponse(
    c,
    new AgentdError(
      "csrf_rejected",
      `Refused a cross-site ${c.req.method} to ${c.req.path}: ${verdict.reason}. State changes are accepted from this agentd's own pages only.`,
    ),
  );
}

/** sameOriginCheck as a middleware. */
export function sameOriginGuard(): MiddlewareHandler {
  return checkMiddleware(sameOriginCheck);
}
