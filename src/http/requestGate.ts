import type { Context, MiddlewareHandler } from "hono";
import type { BodyLimitVerdict } from "./bodyLimits.ts";
import { routePath } from "hono/route";
import type { RequestCounter } from "./requestCounter.ts";

/** A check made before any route: a Response refuses the request, undefined lets it through. */
export type RequestCheck = (c: Context) => Response | undefined;

/** One check as a middleware of its own, where it guards a few routes only. */
export function checkMiddleware(check: RequestCheck): MiddlewareHandler {
  return async (c, next) => check(c) ?? next();
}

export interface RequestGateOptions {
  /** In order; the first refusal answers. */
  checks: readonly RequestCheck[];
  /** The body limit of the request's path (bodyLimits.ts). */
  bodyLimit: (c: Context) => BodyLimitVerdict;
  counter: RequestCounter;
  /** The app's error handler, for a check that throws. */
  onError: (error: Error, c: Context) => Response | Promise<Response>;
}

/**
 * Every request's checks and its count in one middleware: each middleware is one more async step
 * per request, and the proxy's requests are many. Counted after the answer, refusals too.
 */
export function requestGate(options: RequestGateOptions): MiddlewareHandler {
  // Resolves to nothing: a route that made no answer stays Hono's "not finalized" error, not an empty 200.
  return async (c, next) => {
    await runGate(options, c, next, matchedRoute);
  };
}

/** The route template Hono matched, as the request count labels it. */
function matchedRoute(c: Context): string {
  const last = routePath(c, -1);
  return last && last !== "*" && last !== "/*" ? last : "unmatched";
}

/**
 * The gate around the route: checks, body limit, errors, then the count under the route's label;
 * resolves to the answer.
 * `route` is the middleware's `next`, or a hot route's handler (whose answer becomes the response);
 * `label` the route's label, or how to find it once the route ran.
 */
export async function runGate(
  options: RequestGateOptions,
  c: Context,
  route: (c: Context) => Promise<unknown>,
  label: string | ((c: Context) => string),
): Promise<Response> {
  try {
    const refused = firstRefusal(options.checks, c);
    const limit = refused ? undefined : options.bodyLimit(c);
    if (refused) c.res = refused;
    else if (limit === undefined) {
      // Hono's next resolves to its context: only a handler's Response is the answer.
      const answer = await route(c);
      if (answer instanceof Response) c.res = answer;
    } else if ("refused" in limit) c.res = limit.refused;
    else {
      const answer = await limit.streamed(c, async () => {
        const routed = await route(c);
        if (routed instanceof Response) c.res = routed;
      });
      if (answer instanceof Response) c.res = answer;
    }
    if (c.req.method === "HEAD" && c.res.body) c.res = await withoutBody(c.res);
  } catch (error) {
    c.res = await options.onError(error as Error, c);
  }
  options.counter.record(c.req.method, typeof label === "string" ? label : label(c), c.res.status);
  // The answer itself: a hot route's caller hands it to the server without a step of its own.
  return c.res;
}

function firstRefusal(checks: readonly RequestCheck[], c: Context): Response | undefined {
  for (const check of checks) {
    const refused = check(c);
    if (refused) return refused;
  }
  return undefined;
}

/**
 * A HEAD is answered by its GET route, whose body Hono then drops unread: a stream the route began
 * (a session's events, with a subscription and a heartbeat timer) would never hear that nobody reads
 * it, and would hold both, and every event since, until its session ended. The body is cancelled here.
 */
async function withoutBody(answer: Response): Promise<Response> {
  await answer.body?.cancel();
  return new Response(null, answer);
}
