import type { Context } from "hono";
import { AgentdError } from "../core/errors/index.ts";
import { STATUS_CSP } from "./statusLayout.tsx";

export type StatusFormat = "html" | "text" | "json";

/** JSON when asked by ?format= or Accept; HTML for browsers; plain text for curl's `*\/*`. */
function negotiateStatusFormat(accept: string | undefined, format: string | undefined): StatusFormat {
  if (format === "json" || format === "text" || format === "html") return format;
  const value = (accept ?? "").toLowerCase();
  if (value.includes("application/json")) return "json";
  if (value.includes("text/html")) return "html";
  return "text";
}

export function formatOf(c: Context): StatusFormat {
  return negotiateStatusFormat(c.req.header("accept"), c.req.query("format"));
}

export function sendHtml(c: Context, body: string): Response {
  return c.body(body, 200, {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": STATUS_CSP,
    "Cache-Control": "no-store",
    Vary: "Accept",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
  });
}

export function sendText(c: Context, body: string): Response {
  return c.body(body, 200, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", Vary: "Accept" });
}

export function sendJson(c: Context, value: unknown): Response {
  c.header("Cache-Control", "no-store");
  c.header("Vary", "Accept");
  return c.json(value);
}

export function parseId(text: string): number {
  if (!/^\d{1,15}$/.test(text)) throw new AgentdError("invalid_incident_id", `Cannot use "${text}" as an incident id: expected a number`);
  return Number(text);
}

/** Where a form post without JavaScript goes back to: the page it came from, when that is ours. */
export function returnPath(c: Context, fallback: string): string {
  const referer = c.req.header("referer");
  if (!referer) return fallback;
  try {
    const url = new URL(referer);
    return url.host === c.req.header("host") && url.pathname.startsWith("/status") ? url.pathname + url.search : fallback;
  } catch {
    return fallback;
  }
}
