import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { timingSafeEqual } from "node:crypto";
import { TOKEN_COOKIE } from "./bearerAuth.ts";

/** Whether the request carries `token`, as `Authorization: Bearer` (the CLI) or the page's HttpOnly cookie. */
export function carriesToken(c: Context, token: string): boolean {
  const header = c.req.header("authorization") ?? "";
  const given = header.toLowerCase().startsWith("bearer ") ? header.slice(7).trim() : (getCookie(c, TOKEN_COOKIE) ?? "");
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  // An empty token configured by mistake must not match a request that carries none.
  return b.length > 0 && a.length === b.length && timingSafeEqual(a, b);
}
