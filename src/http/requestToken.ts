import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { timingSafeEqual } from "node:crypto";

/** The page's HttpOnly cookie that carries the token once a person has signed in. */
export const TOKEN_COOKIE = "agentd_token";

/** Whether `given` is `expected`, in constant time. An empty token configured by mistake matches nothing. */
export function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return b.length > 0 && a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request presents, as `Authorization: Bearer` (the CLI) or the page's HttpOnly cookie; "" when none. */
export function presentedToken(c: Context): string {
  const header = c.req.header("authorization") ?? "";
  return header.toLowerCase().startsWith("bearer ") ? header.slice(7).trim() : (getCookie(c, TOKEN_COOKIE) ?? "");
}

/** Whether the request carries `token`. */
export function carriesToken(c: Context, token: string): boolean {
  return sameToken(presentedToken(c), token);
}
