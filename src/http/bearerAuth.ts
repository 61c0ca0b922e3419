import type { MiddlewareHandler } from "hono";
import { checkMiddleware, type RequestCheck } from "./requestGate.ts";
import { getCookie } from "hono/cookie";
import { AgentdError } from "../core/errors/index.ts";
import { errorResponse } from "./errorResponse.ts";
import { sameToken, TOKEN_COOKIE } from "./requestToken.ts";

export { TOKEN_COOKIE };

export interface BearerAuthOptions {
  token: string;
  /** Paths reachable without the token: /livez (a probe must not need a secret) and the sign-in form with its assets. */
  exempt: readonly string[];
  /** Where a browser without the token is sent (the sign-in form), with `?next=` the page it asked for. */
  loginPath?: string;
}

/** A browser asking for a page (not a script or a CLI asking for data): it is better sent to the sign-in form than shown JSON. */
function wantsPage(method: string, accept: string, path: string): boolean {
  return (method === "GET" || method === "HEAD") && accept.includes("text/html") && (path === "/" || path.startsWith("/status"));
}

/** Requires `Authorization: Bearer <token>` (or the page's HttpOnly cookie) on a non-loopback bind. */
export function bearerCheck(options: BearerAuthOptions): RequestCheck {
  return (c) => {
    if (options.exempt.includes(c.req.path)) return undefined;
    const header = c.req.header("authorization") ?? "";
    // Anthropic's clients send their key as x-api-key (Claude Code's ANTHROPIC_API_KEY): agentd's token there too.
    const apiKey = c.req.path.startsWith("/v1/messages") ? c.req.header("x-api-key") : undefined;
    const given = header.toLowerCase().startsWith("bearer ")
      ? header.slice(7).trim()
      : (apiKey?.trim() ?? getCookie(c, TOKEN_COOKIE) ?? "");
    if (given && sameToken(given, options.token)) return undefined;
    if (options.loginPath && wantsPage(c.req.method, c.req.header("accept") ?? "", c.req.path)) {
      const url = new URL(c.req.url);
      return c.redirect(`${options.loginPath}?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
    }
    c.header("WWW-Authenticate", 'Bearer realm="agentd"');
    return errorResponse(
      c,
      new AgentdError(
        "unauthorized",
        "Missing or wrong bearer token: send 'Authorization: Bearer <token>' (the token is in <data_dir>/token)",
      ),
    );
  };
}

/** bearerCheck as a middleware. */
export function bearerAuth(options: BearerAuthOptions): MiddlewareHandler {
  return checkMiddleware(bearerCheck(options));
}
