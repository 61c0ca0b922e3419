import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AgentdError } from "../core/errors/index.ts";
import type { Mount } from "../core/capability.ts";
import type { Logger } from "../core/log/index.ts";
import { renderPrometheus, type MetricFamily } from "../core/metrics/index.ts";
import { agentPeerGuard, type AgentPeerGuardOptions } from "./agentPeerGuard.ts";
import { bearerAuth } from "./bearerAuth.ts";
import { sameOriginGuard } from "./csrfGuard.ts";
import { createErrorHandler, errorResponse } from "./errorResponse.ts";
import { loopbackHostOnly } from "./hostGuard.ts";
import { loopbackOnly } from "./loopbackOnly.ts";
import { probeRoutes, type ProbeDeps } from "./probeRoutes.ts";
import { RequestCounter } from "./requestCounter.ts";

export type { Mount } from "../core/capability.ts";

export interface AppDeps extends Omit<ProbeDeps, "requestsTotal"> {
  logger: Logger;
  /** Set when bound to a non-loopback address: every route but /livez and `publicPaths` then needs it. */
  requiredToken?: string;
  /** Paths a browser must reach before it holds the token (the sign-in form and its assets). */
  publicPaths?: readonly string[];
  /** The body limit of every mount that does not set its own. */
  bodyLimitBytes: number;
  metricFamilies: () => MetricFamily[];
  /** Capabilities that render their own Prometheus text (the proxy); the host's verdict reads /health's sources, so may wait. */
  metricsText: Array<() => string | Promise<string>>;
  /** Mounted in order, after the probes and /metrics. */
  mounts: Mount[];
  /** When set, decisions and direct calls from the agent are refused, and decisions need the token (the worker sets it). */
  agentPeers?: Omit<AgentPeerGuardOptions, "logger">;
}

function limitMiddleware(maxSize: number): MiddlewareHandler {
  return bodyLimit({
    maxSize,
    onError: (c) => errorResponse(c, new AgentdError("body_too_large", `Request body is larger than the limit of ${maxSize} bytes`)),
  });
}

function underPath(path: string, prefix: string): boolean {
  return prefix === "/" || path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * One body limit per request, the one of the mount that serves it: a limit per mount as a
 * middleware would stack (a root mount's limit would also cover /v1, overriding the proxy's).
 */
function bodyLimits(mounts: readonly Mount[], defaultBytes: number): MiddlewareHandler {
  const own = mounts
    .filter((mount) => mount.bodyLimitBytes !== undefined)
    .sort((a, b) => b.path.length - a.path.length)
    .map((mount) => ({ path: mount.path, limit: limitMiddleware(mount.bodyLimitBytes!) }));
  const fallback = limitMiddleware(defaultBytes);
  return (c, next) => (own.find((entry) => underPath(c.req.path, entry.path))?.limit ?? fallback)(c, next);
}

export function createApp(deps: AppDeps): { app: Hono; requests: RequestCounter } {
  const requests = new RequestCounter();
  const app = new Hono();
  app.onError(createErrorHandler(deps.logger));
  app.notFound((c) => errorResponse(c, new AgentdError("not_found", `No route for ${c.req.method} ${c.req.path}`)));
  app.use(requests.middleware());
  // Before auth: a decision from the agent's commands is refused whatever credential it carries.
  if (deps.agentPeers) app.use(agentPeerGuard({ ...deps.agentPeers, logger: deps.logger }));
  if (deps.requiredToken)
    app.use(
      bearerAuth({
        token: deps.requiredToken,
        exempt: ["/livez", ...(deps.publicPaths ?? [])],
        loginPath: deps.publicPaths?.includes("/login") ? "/login" : undefined,
      }),
    );
  else app.use(loopbackHostOnly());
  // Cookie-authenticated page buttons make state-changing POSTs: refuse them from other sites.
  app.use(sameOriginGuard());
  app.use(bodyLimits(deps.mounts, deps.bodyLimitBytes));

  const probes: ProbeDeps = { ...deps, requestsTotal: () => requests.total };
  app.route("/", probeRoutes(probes));
  app.get("/metrics", async (c) => {
    const uptime: MetricFamily = {
      name: "agentd_uptime_seconds",
      help: "Seconds since the worker started.",
      type: "gauge",
      samples: [{ value: (Date.now() - deps.startedAt) / 1000 }],
    };
    const rss: MetricFamily = {
      name: "agentd_resident_memory_bytes",
      help: "Resident memory of the worker.",
      type: "gauge",
      samples: [{ value: process.memoryUsage.rss() }],
    };
    const body =
      renderPrometheus([requests.metricFamily(), uptime, rss, ...deps.metricFamilies()]) +
      (await Promise.all(deps.metricsText.map((render) => render()))).join("");
    return c.body(body, 200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
  });
  for (const mount of deps.mounts) {
    if (mount.loopbackOnly) app.use(mount.path === "/" ? "*" : `${mount.path}/*`, loopbackOnly());
    app.route(mount.path, mount.app);
  }
  return { app, requests };
}
