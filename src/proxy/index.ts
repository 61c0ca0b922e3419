import type { Database } from "bun:sqlite";
import type { Capability, ConfigChange, HotRoutes, ReloadReport } from "../core/capability.ts";
import type { Hono } from "hono";
import type { HealthCheck } from "../core/health/index.ts";
import { createLogger, type Logger } from "../core/log/index.ts";
import type { MetricFamily } from "../core/metrics/index.ts";
import { createAdminRoutes } from "./routes/adminRoutes.ts";
import type { ProviderConfig, ProxyConfig } from "../core/config/sections/providerConfig.ts";
import { providersHealth, providerStatus, type ProviderStatus } from "./upstream/providerStatus.ts";
import { ProxyCore } from "./state/proxyCore.ts";
import type { ToolCallModelSummary } from "./state/toolCallStats.ts";
import { createProxyRoutes, proxyErrorHandler } from "./routes/proxyRoutes.ts";
import type { Tracer } from "../telemetry/index.ts";

export { providerConfigSchema, proxyConfigSchema } from "../core/config/sections/providerConfig.ts";
export type { ProviderConfig, ProxyConfig } from "../core/config/sections/providerConfig.ts";
export type { ProviderStatus, ProviderState } from "./upstream/providerStatus.ts";
export { proxyMigrations } from "./proxyMigrations.ts";
export { clearQuirks, listQuirks } from "./upstream/quirkStore.ts";
export type { StoredQuirk } from "./upstream/quirkStore.ts";
export { ProxyError, NO_PROVIDER_MESSAGE } from "./upstream/proxyError.ts";
export { normalizeBaseUrl } from "./upstream/upstreamUrl.ts";
export { socketHandlers, type SocketSession } from "./routes/socketSession.ts";
export type { ProxyErrorCode } from "./upstream/proxyError.ts";

/** A provider as /status shows it: its state and, per model, how its answers to requests that offered tools came out. */
export type ProxyProviderStatus = ProviderStatus & { tool_calls: ToolCallModelSummary[] };

export interface CreateProxyOptions {
  providers: ProviderConfig[];
  config: ProxyConfig;
  db: Database;
  logger?: Logger;
  /** Each request becomes a `gen_ai` client span; off unless telemetry is configured. */
  tracer?: Tracer;
}

export interface Proxy {
  /** Mount at "/v1": POST /chat/completions, POST /responses, GET /responses/:id, GET /models. */
  routes: Hono;
  /** The static POST routes of `routes` (every model call), served by the worker without the router. */
  hotRoutes: HotRoutes;
  /** Mount at "/api/admin/proxy" behind a loopback-only guard. */
  adminRoutes: Hono;
  status(): ProxyProviderStatus[];
  healthChecks(): HealthCheck[];
  metricFamilies(): MetricFamily[];
  /**
   * Counts the requests finished in this turn of the event loop now (their log lines, /metrics,
   * rollups), where they would be counted on the next: for a reader that cannot wait for it.
   */
  countFinished(): void;
  /** Stops the maintenance timer and writes pending rollups. */
  close(): Promise<void>;
  /** A config reload: the providers, retry settings and maintenance interval from now on; names what needs a restart. */
  reload(change: ConfigChange): ReloadReport;
}

/**
 * Proxy settings a reload applies; any other needs a restart (breakers keep the settings they were
 * built with, the stores their expiry, the /v1 mount its body limit).
 */
const PROXY_LIVE = [
  "providers",
  "proxy.max_attempts",
  "proxy.max_total_attempts",
  "proxy.retry_base_ms",
  "proxy.retry_max_ms",
  "proxy.retry_after_cap_ms",
  "proxy.client_retry_after_cap_ms",
  "proxy.timeout_raise_max_factor",
  "proxy.maintenance_interval_ms",
  "proxy.upstream_client",
];

export function createProxy(options: CreateProxyOptions): Proxy {
  const logger = options.logger ?? createLogger("proxy");
  // Its own copy: a reload changes it in place.
  const core = new ProxyCore(options.providers, structuredClone(options.config), options.db, logger, options.tracer);
  const { app: routes, hot: hotRoutes } = createProxyRoutes(core, logger);
  const adminRoutes = createAdminRoutes(core, logger);
  adminRoutes.onError(proxyErrorHandler(logger));
  const maintain = () => {
    try {
      core.maintain();
    } catch (error) {
      logger.error("proxy.maintenance_failed", { error });
    }
  };
  const startTimer = (intervalMs: number) => {
    const started = setInterval(maintain, intervalMs);
    started.unref();
    return started;
  };
  let timer = startTimer(options.config.maintenance_interval_ms);
  let closed = false;
  return {
    routes,
    hotRoutes,
    adminRoutes,
    status: () => {
      core.recorder.flush();
      return core.providers.map((p) => ({ ...providerStatus(p), tool_calls: core.metrics.toolCalls.forProvider(p.name) }));
    },
    healthChecks: () => [providersHealth(core.providers.map(providerStatus))],
    metricFamilies: () => core.metricFamilies(),
    countFinished: () => core.recorder.flush(),
    reload: (change) => {
      const next = change.after.proxy;
      if (change.touches("providers")) core.replaceProviders(change.after.providers);
      // Dispatches read these settings as they go: the next attempt or retry follows the new ones.
      Object.assign(core.settings, {
        baseMs: next.retry_base_ms,
        maxMs: next.retry_max_ms,
        retryAfterCapMs: next.retry_after_cap_ms,
        clientRetryAfterCapMs: next.client_retry_after_cap_ms,
        maxAttemptsPerProvider: next.max_attempts,
        maxTotalAttempts: next.max_total_attempts,
        ownClient: next.upstream_client === "auto",
      });
      // The admin route reads its cap at each request.
      core.config.timeout_raise_max_factor = next.timeout_raise_max_factor;
      if (change.touches("proxy.maintenance_interval_ms") && !closed) {
        clearInterval(timer);
        timer = startTimer(next.maintenance_interval_ms);
      }
      return change.reportLive(["providers", "proxy"], PROXY_LIVE);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      core.maintain();
    },
  };
}

export interface ProxyCapability extends Capability {
  status(): ProxyProviderStatus[];
}

/** The proxy as the worker mounts it: /v1 under the proxy's own body limit, admin routes for loopback peers only. */
export function createProxyCapability(options: CreateProxyOptions): ProxyCapability {
  const proxy = createProxy(options);
  return {
    name: "proxy",
    routes: [
      { path: "/v1", app: proxy.routes, hot: proxy.hotRoutes, bodyLimitBytes: options.config.max_body_bytes },
      { path: "/api/admin/proxy", app: proxy.adminRoutes, loopbackOnly: true },
    ],
    healthChecks: proxy.healthChecks,
    metricFamilies: proxy.metricFamilies,
    status: proxy.status,
    reload: proxy.reload,
    close: proxy.close,
  };
}
