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
 * Not an async function: the route's promise and one step after it, for every request (an async
 * function awaiting the route added a step; bench/compare.ts --rows c32 read this ×0.970, ×0.995
 * and ×0.989 against it).
 */
export function runGate(
  options: RequestGateOptions,
  c: Context,
  route: (c: Context) => Promise<unknown>,
  label: string | ((c: Context) => string),
): Promise<Response> {
  let routed: Promise<unknown>;
  try {
    routed = admitted(options, c, route);
  } catch (error) {
    routed = Promise.reject(error);
  }
  return routed.then(
    (answer) => answered(options, c, answer, label),
    (error: unknown) => failed(options, c, error, label),
  );
}

/** The route's answer, or a check's or the body limit's refusal. */
function admitted(options: RequestGateOptions, c: Context, route: (c: Context) => Promise<unknown>): Promise<unknown> {
  const refused = firstRefusal(options.checks, c);
  if (refused) return Promise.resolve(refused);
  const limit = options.bodyLimit(c);
  if (limit === undefined) return route(c);
  if ("refused" in limit) return Promise.resolve(limit.refused);
  return limit.streamed(c, async () => {
    const routed = await route(c);
    if (routed instanceof Response) c.res = routed;
  });
}

function answered(
  options: RequestGateOptions,
  c: Context,
  answer: unknown,
  label: string | ((c: Context) => string),
): Response | Promise<Response> {
  try {
    // Hono's next resolves to its context: only a handler's Response is the answer.
    if (answer instanceof Response) c.res = answer;
    if (c.req.raw.method === "HEAD" && c.res.body)
      return withoutBody(c.res).then(
        (bare) => {
          c.res = bare;
          return counted(options, c, label);
        },
        (error: unknown) => failed(options, c, error, label),
      );
  } catch (error) {
    return failed(options, c, error, label);
  }
  return counted(options, c, label);
}

async function failed(
  options: RequestGateOptions,
  c: Context,
  error: unknown,
  label: string | ((c: Context) => string),
): Promise<Response> {
  c.res = await options.onError(error as Error, c);
  return counted(options, c, label);
}

/** Counted after the answer, refusals too; the answer itself, which a hot route's caller hands to the server. */
function counted(options: RequestGateOptions, c: Context, label: string | ((c: Context) => string)): Response {
  options.counter.record(c.req.raw.method, typeof label === "string" ? label : label(c), c.res.status);
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
