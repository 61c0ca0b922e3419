import type { Server } from "bun";
import { sameToken } from "./requestToken.ts";
import { AgentdError, errorBody } from "../core/errors/index.ts";
import type { ClientConnections } from "./clientConnections.ts";
import { whenStreamEnds } from "./streamEnd.ts";

export interface ConnectionLimits {
  /** Seconds a connection may stay silent between requests (and a handler that is not streaming). */
  idleTimeoutS: number;
  /** Open connections one client address may hold; beyond, its requests are refused and the socket closed. */
  maxPerClient: number;
  connections: ClientConnections;
  /** A request carrying it is the operator's: never refused for its address's connections. */
  token?: string;
}

type Fetch = (request: Request, server: Server<undefined>) => Response | Promise<Response>;

function carriesToken(request: Request, token: string | undefined): boolean {
  const header = request.headers.get("authorization") ?? "";
  return token !== undefined && header.toLowerCase().startsWith("bearer ") && sameToken(header.slice(7).trim(), token);
}

/**
 * Wraps the app's fetch with the connection rules Bun.serve lacks. Idle connections close after
 * `idleTimeoutS` (Bun.serve's idleTimeout; a connection that never sends its headers closes after
 * uWS's own 10 s). A request in progress is exempt while its handler works (a model call may take
 * minutes) and while a stream (SSE) is open; the timeout comes back when the answer is handed over
 * or the stream ends (told by the stream's maker when it can: streamEnd.ts). A client address holding more than `maxPerClient` connections gets 503 and
 * `Connection: close`, fast, so one client cannot take every descriptor.
 */
export function withConnectionLimits(fetch: Fetch, limits: ConnectionLimits): Fetch {
  return (request, server) => {
    // Asking the peer's address is a syscall: only worth it while some address is over the limit.
    const address = limits.connections.busiest() > limits.maxPerClient ? server.requestIP(request)?.address : undefined;
    if (
      address &&
      limits.connections.count(address) > limits.maxPerClient &&
      !carriesToken(request, limits.token) &&
      // The supervisor's liveness probe shares loopback with the commands: a flood must not get the worker restarted.
      !request.url.endsWith("/livez")
    ) {
      const error = new AgentdError(
        "too_many_connections",
        `This client holds more than ${limits.maxPerClient} connections to agentd; close idle ones and try again`,
      );
      return Response.json(errorBody(error), { status: error.status, headers: { connection: "close", "retry-after": "1" } });
    }
    server.timeout(request, 0);
    // Not an async function: one promise step less on every request.
    const answer = fetch(request, server);
    const restore = () => server.timeout(request, limits.idleTimeoutS);
    return answer instanceof Promise ? answer.then((response) => handedOver(response, restore)) : handedOver(answer, restore);
  };
}

/** The idle timeout comes back once the answer is handed over, or when its stream (SSE) ends. */
function handedOver(response: Response, restore: () => void): Response {
  // The type first: asking a plain answer for its body would make a stream of it for nothing.
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream") || !response.body) {
    restore();
    return response;
  }
  if (whenStreamEnds(response.body, restore)) return response;
  const body = response.body.pipeThrough(new TransformStream({ flush: restore }));
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
