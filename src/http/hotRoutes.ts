import { Context, type Hono } from "hono";
import type { Mount } from "../core/capability.ts";
import { type RequestGateOptions, runGate } from "./requestGate.ts";

type Handler = (c: Context) => Promise<Response>;

/** What the server (and an in-process caller) calls: the app's fetch, with hot routes beside it. */
export type AppFetch = (request: Request, server?: unknown) => Response | Promise<Response>;

/**
 * The worker's fetch: a mount's hot routes (the proxy's model calls) are served here, under the
 * same gate as every other route (checks, body limit, error handler, request count), without the
 * router and the composed middleware chain around them; any other request goes to the app. A hot
 * route the app would run with any other middleware than the gate stays the app's.
 */
export function withHotRoutes(app: Hono, mounts: readonly Mount[], gate: RequestGateOptions): AppFetch {
  /** By path, then method: found without building a key per request. */
  const hot = new Map<string, Map<string, Handler>>();
  for (const mount of mounts) {
    // A loopback-only mount has its own middleware: served by the app, never here.
    if (!mount.hot || mount.loopbackOnly) continue;
    for (const [key, handler] of mount.hot) {
      const space = key.indexOf(" ");
      const method = key.slice(0, space);
      const path = `${mount.path === "/" ? "" : mount.path}${key.slice(space + 1)}`;
      // The gate and the route itself, nothing else: a middleware added later keeps the route on the app.
      if (app.router.match(method, path)[0].length !== 2) continue;
      const byMethod = hot.get(path) ?? new Map<string, Handler>();
      byMethod.set(method, handler);
      hot.set(path, byMethod);
    }
  }
  if (hot.size === 0) return (request, server) => app.fetch(request, server);
  return (request, server) => {
    // The path as the app's router reads it (escapes decoded), so both lanes route a request alike.
    const path = app.getPath(request, { env: server });
    const handler = hot.get(path)?.get(request.method);
    // The handler itself as the route, the path as its label: no closure made per request.
    return handler ? runGate(gate, new Context(request, { path, env: server }), handler, path) : app.fetch(request, server);
  };
}
