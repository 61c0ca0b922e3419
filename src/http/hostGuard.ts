import type { Context, MiddlewareHandler } from "hono";
import { AgentdError } from "../core/errors/index.ts";
import { errorResponse } from "./errorResponse.ts";
import { checkMiddleware } from "./requestGate.ts";
import { isLoopbackAddress } from "./token.ts";

/** The host name of a Host header ("127.0.0.1:7070", "[::1]:7070", "localhost"). */
export function hostnameOf(hostHeader: string): string {
  const bracketed = /^\[([^\]]+)\]/.exec(hostHeader);
  if (bracketed) return bracketed[1]!;
  const colon = hostHeader.lastIndexOf(":");
  return colon > 0 && hostHeader.indexOf(":") === colon ? hostHeader.slice(0, colon) : hostHeader;
}

/** The last Host header found loopback: clients send the same one on every request, so it is judged once. */
let lastLoopbackHost: string | undefined;

/**
 * On a loopback bind without a token, answers only requests addressed to a loopback name. A web
 * page whose DNS name was rebound to 127.0.0.1 sends its own name as Host (and as Origin), so
 * same-origin checks pass; this refuses it before it reaches a route that runs commands.
 */
export function loopbackHostCheck(c: Context): Response | undefined {
  const header = c.req.header("host");
  // Browsers always send Host: a request without one (HTTP/1.0 probes, in-process calls) is no rebinding.
  if (header === undefined || header === lastLoopbackHost) return undefined;
  const host = hostnameOf(header).replace(/\.$/, "");
  if (isLoopbackAddress(host)) {
    lastLoopbackHost = header;
    return undefined;
  }
  return errorResponse(
    c,
    new AgentdError(
      "bad_host",
      `Refused Host "${host}": agentd on a loopback address answers loopback names only (127.0.0.1, localhost, ::1)`,
    ),
  );
}

/** loopbackHostCheck as a middleware. */
export function loopbackHostOnly(): MiddlewareHandler {
  return checkMiddleware(loopbackHostCheck);
}
