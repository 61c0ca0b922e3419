import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AgentdError } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import { renderPrometheus, type MetricFamily } from "../core/metrics/index.ts";
import { bearerAuth } from "./bearerAuth.ts";
import { sameOriginGuard } from "./csrfGuard.ts";
import { createErrorHandler, errorResponse } from "./errorResponse.ts";
import { loopbackHostOnly } from "./hostGuard.ts";
import { LOGIN_PATHS, loginRoutes } from "../status/loginRoutes.tsx";
import { loopbackOnly } from "./loopbackOnly.ts";
import { probeRoutes, type ProbeDeps } from "./probeRoutes.ts";
import { RequestCounter } from "./requestCounter.ts";
import { PUBLIC_ASSET_PATHS } from "../status/statusAssets.ts";
import { statusRoutes, type StatusSource } from "../status/statusRoutes.ts";

export interface Mount {
  path: string;
  app: Hono;
  loopbackOnly?: boolean;
}

export interface AppDeps extends Omit<ProbeDeps, "requestsTotal"> {
  logger: Logger;
  /** Set when bound to a non-loopback address: every route but /livez then needs it. */
  requiredToken?: string;
  bodyLimitBytes: number;
  metricFamilies: () => MetricFamily[];
  /** Capabilities that render their own Prometheus text (the proxy). */
  metricsText: Array<() => string>;
  mounts: Mount[];
  status: StatusSource;
}

export function createApp(deps: AppDeps): { app: Hono; requests: RequestCounter } {
  const requests = new RequestCounter();
  const app = new Hono();
  app.onError(createErrorHandler(deps.logger));
  app.notFound((c) => errorResponse(c, new AgentdError("not_found", `No route for ${c.req.method} ${c.req.path}`)));
  app.use(requests.middleware());
  if (deps.requiredToken) app.use(bearerAuth({ token: deps.requiredToken, exempt: ["/livez", ...LOGIN_PATHS, ...PUBLIC_ASSET_PATHS] }));
  else app.use(loopbackHostOnly());
  // Cookie-authenticated page buttons make state-changing POSTs: refuse them from other sites.
  app.use(sameOriginGuard());
  app.use(
    bodyLimit({
      maxSize: deps.bodyLimitBytes,
      onError: (c) =>
        errorResponse(c, new AgentdError("body_too_large", `Request body is larger than the limit of ${deps.bodyLimitBytes} bytes`)),
    }),
  );

  const probes: ProbeDeps = { ...deps, requestsTotal: () => requests.total };
  app.route("/", probeRoutes(probes));
  app.get("/metrics", (c) => {
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
      deps.metricsText.map((render) => render()).join("");
    return c.body(body, 200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
  });
  app.route("/", statusRoutes(deps.status));
  if (deps.requiredToken) app.route("/", loginRoutes({ token: deps.requiredToken }));
  for (const mount of deps.mounts) {
    if (mount.loopbackOnly) app.use(`${mount.path}/*`, loopbackOnly());
    app.route(mount.path, mount.app);
  }
  return { app, requests };
}
