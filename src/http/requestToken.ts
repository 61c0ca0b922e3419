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

/** Whether the request carries `token`, as `Authorization: Bearer` (the CLI) or the page's HttpOnly cookie. */
export function carriesToken(c: Context, token: string): boolean {
  const header = c.req.header("authorization") ?? "";
  const given = header.toLowerCase().startsWith("bearer ") ? header.slice(7).trim() : (getCookie(c, TOKEN_COOKIE) ?? "");
  return sameToken(given, token);
}
