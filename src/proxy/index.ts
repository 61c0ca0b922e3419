import type { Database } from "bun:sqlite";
import type { Capability } from "../core/capability.ts";
import type { Hono } from "hono";
import type { HealthCheck } from "../core/health/index.ts";
import { createLogger, type Logger } from "../core/log/index.ts";
import { createAdminRoutes } from "./routes/adminRoutes.ts";
import type { ProviderConfig, ProxyConfig } from "../core/config/sections/providerConfig.ts";
import { providersHealth, providerStatus, type ProviderStatus } from "./upstream/providerStatus.ts";
import { ProxyCore } from "./state/proxyCore.ts";
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
export type { ProxyErrorCode } from "./upstream/proxyError.ts";

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
  /** Mount at "/api/admin/proxy" behind a loopback-only guard. */
  adminRoutes: Hono;
  status(): ProviderStatus[];
  healthChecks(): HealthCheck[];
  metricsText(): string;
  /** Stops the maintenance timer and writes pending rollups. */
  close(): Promise<void>;
  /** A config reload: the providers to route to from now on. */
  replaceProviders(providers: readonly ProviderConfig[]): void;
}

export function createProxy(options: CreateProxyOptions): Proxy {
  const logger = options.logger ?? createLogger("proxy");
  const core = new ProxyCore(options.providers, options.config, options.db, logger, options.tracer);
  const routes = createProxyRoutes(core, logger);
  const adminRoutes = createAdminRoutes(core, logger);
  adminRoutes.onError(proxyErrorHandler(logger));
  const timer = setInterval(() => {
    try {
      core.maintain();
    } catch (error) {
      logger.error("proxy.maintenance_failed", { error });
    }
  }, options.config.maintenance_interval_ms);
  timer.unref();
  let closed = false;
  return {
    routes,
    adminRoutes,
    status: () => core.providers.map(providerStatus),
    healthChecks: () => [providersHealth(core.providers.map(providerStatus))],
    metricsText: () => core.metricsText(),
    replaceProviders: (providers) => core.replaceProviders(providers),
    close: async () => {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      core.maintain();
    },
  };
}

export interface ProxyCapability extends Capability {
  status(): ProviderStatus[];
  replaceProviders(providers: readonly ProviderConfig[]): void;
}

/** The proxy as the worker mounts it: /v1 under the proxy's own body limit, admin routes for loopback peers only. */
export function createProxyCapability(options: CreateProxyOptions): ProxyCapability {
  const proxy = createProxy(options);
  return {
    name: "proxy",
    routes: [
      { path: "/v1", app: proxy.routes, bodyLimitBytes: options.config.max_body_bytes },
      { path: "/api/admin/proxy", app: proxy.adminRoutes, loopbackOnly: true },
    ],
    healthChecks: proxy.healthChecks,
    metricsText: proxy.metricsText,
    status: proxy.status,
    replaceProviders: proxy.replaceProviders,
    close: proxy.close,
  };
}
