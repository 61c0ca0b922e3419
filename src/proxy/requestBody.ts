import type { Context } from "hono";
import { invalidRequest } from "./proxyError.ts";

/** Reads the (size-limited, see bodyLimit in proxyRoutes.ts) JSON object body, keeping its text. */
export async function readJsonObject(c: Context): Promise<{ raw: string; body: Record<string, unknown> }> {
  const raw = await c.req.text();
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw invalidRequest("The request body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalidRequest("The request body must be a JSON object");
  return { raw, body: body as Record<string, unknown> };
}

/** Headers every proxied answer carries: which provider answered, and what agentd itself added. */
export function agentdHeaders(provider: string, overheadMs: number, into: Record<string, string>): Record<string, string> {
  into["x-agentd-provider"] = provider;
  into["x-agentd-overhead-ms"] = overheadMs.toFixed(3);
  return into;
}
