import { Hono } from "hono";
import { AgentdError } from "../core/errors/index.ts";
import type { Mount } from "../core/capability.ts";
import type { Logger } from "../core/log/index.ts";
import { agentdFamilies, buildFacts, processFacts, processFamilies, renderPrometheus, type MetricFamily } from "../core/metrics/index.ts";
import { agentPeerCheck, type AgentPeerGuardOptions } from "./agentPeerGuard.ts";
import { bearerCheck } from "./bearerAuth.ts";
import { bodyLimits } from "./bodyLimits.ts";
import { sameOriginCheck } from "./csrfGuard.ts";
import { createErrorHandler, errorResponse } from "./errorResponse.ts";
import { loopbackHostCheck } from "./hostGuard.ts";
import { loopbackOnly } from "./loopbackOnly.ts";
import { probeRoutes, type ProbeDeps } from "./probeRoutes.ts";
import { RequestCounter } from "./requestCounter.ts";
import { type RequestCheck, requestGate } from "./requestGate.ts";
import { type AppFetch, withHotRoutes } from "./hotRoutes.ts";

export type { Mount } from "../core/capability.ts";

export interface AppDeps extends Omit<ProbeDeps, "requestsTotal"> {
  logger: Logger;
  /** Set when bound to a non-loopback address: every route but /livez and `publicPaths` then needs it. */
  requiredToken?: string;
  /** Paths a browser must reach before it holds the token (the sign-in form and its assets). */
  publicPaths?: readonly string[];
  /** The body limit of every mount that does not set its own. */
  bodyLimitBytes: number;
  /** The worker's and its capabilities' families, after the process and HTTP ones. */
  metricFamilies: () => MetricFamily[];
  /** Brings state that takes waiting to read (the verdict) up to date before metricFamilies renders it. */
  beforeScrape?: () => Promise<void>;
  /** Mounted in order, after the probes and /metrics. */
  mounts: Mount[];
  /** When set, decisions and direct calls from the agent are refused, and decisions need the token (the worker sets it). */
  agentPeers?: Omit<AgentPeerGuardOptions, "logger">;
}

export function createApp(deps: AppDeps): {
  app: Hono;
  requests: RequestCounter;
  /** The app's fetch with the mounts' hot routes served beside it (hotRoutes.ts): what the server calls. */
  fetch: AppFetch;
} {
  const requests = new RequestCounter();
  const app = new Hono();
  const onError = createErrorHandler(deps.logger);
  app.onError(onError);
  app.notFound((c) => errorResponse(c, new AgentdError("not_found", `No route for ${c.req.method} ${c.req.path}`)));
  const checks: RequestCheck[] = [];
  // Before auth: a decision from the agent's commands is refused whatever credential it carries.
  if (deps.agentPeers) checks.push(agentPeerCheck({ ...deps.agentPeers, logger: deps.logger }));
  if (deps.requiredToken)
    checks.push(
      bearerCheck({
        token: deps.requiredToken,
        exempt: ["/livez", ...(deps.publicPaths ?? [])],
        loginPath: deps.publicPaths?.includes("/login") ? "/login" : undefined,
      }),
    );
  else checks.push(loopbackHostCheck);
  // Cookie-authenticated page buttons make state-changing POSTs: refuse them from other sites.
  checks.push(sameOriginCheck);
  const gate = { checks, bodyLimit: bodyLimits(deps.mounts, deps.bodyLimitBytes), counter: requests, onError };
  app.use(requestGate(gate));

  const probes: ProbeDeps = { ...deps, requestsTotal: () => requests.total };
  app.route("/", probeRoutes(probes));
  app.get("/metrics", async (c) => {
    await deps.beforeScrape?.();
    const uptime: MetricFamily = {
      name: "agentd_uptime_seconds",
      help: "Seconds since the worker started.",
      type: "gauge",
      samples: [{ value: (Date.now() - deps.startedAt) / 1000 }],
    };
    const facts = processFacts();
    const rss: MetricFamily = {
      name: "agentd_resident_memory_bytes",
      help: "Resident memory of the worker (as process_resident_memory_bytes; kept for existing dashboards).",
      type: "gauge",
      samples: [{ value: facts.residentBytes }],
    };
    const body = renderPrometheus([
      ...processFamilies(facts),
      ...agentdFamilies(buildFacts(deps.version), deps.startedAt),
      requests.metricFamily(),
      uptime,
      rss,
      ...deps.metricFamilies(),
    ]);
    return c.body(body, 200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
  });
  for (const mount of deps.mounts) {
    if (mount.loopbackOnly) app.use(mount.path === "/" ? "*" : `${mount.path}/*`, loopbackOnly());
    app.route(mount.path, mount.app);
  }
  return { app, requests, fetch: withHotRoutes(app, deps.mounts, gate) };
}
