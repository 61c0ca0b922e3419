import type { Context, Hono } from "hono";
import type { HealthCheck } from "./health/index.ts";
import type { MetricFamily } from "./metrics/index.ts";
import type { ToolDefinition } from "./tools/toolDefinition.ts";
import type { ConfigChange, ReloadReport } from "./configChange.ts";

export type { ConfigChange, ReloadReport } from "./configChange.ts";

/** Routes a capability (or the status page) serves, and where the worker's app mounts them. */
export interface Mount {
  /** "/" mounts at the root. */
  path: string;
  app: Hono;
  /** Refused to anyone but a loopback peer, whatever the bind (admin routes). */
  loopbackOnly?: boolean;
  /** The largest request body these routes take; the server's limit when left out. */
  bodyLimitBytes?: number;
  /**
   * Routes of `app` the worker also serves without Hono's router (the proxy's model calls, one per
   * request of every client): the same checks, limits, counting and handler, fewer steps. Keyed
   * "POST /chat/completions", relative to `path`; exact paths only.
   */
  hot?: HotRoutes;
}

export type HotRoutes = ReadonlyMap<string, (c: Context) => Promise<Response>>;

/**
 * One capability of the worker (proxy, pty, files, hop, watchdog, agent), as the worker composes
 * it: what it mounts, the tools it gives the agent, what it reports, how it takes a reloaded
 * config, and how it stops. Each
 * capability's index.ts has one factory returning this shape (with typed extras the page reads).
 */
export interface Capability {
  readonly name: string;
  routes?: Mount[];
  tools?: ToolDefinition[];
  /** The capability's entries of /health, under its name. */
  healthChecks?: () => HealthCheck[];
  /**
   * The capability's /metrics families, from what it keeps in memory as events happen: no store
   * query and no waiting at scrape time (the one renderer writes them).
   */
  metricFamilies?: () => MetricFamily[];
  /**
   * A config reload: applies what it can of the changed keys it owns, in place (nothing open is
   * dropped), and names those that only a restart applies.
   */
  reload(change: ConfigChange): ReloadReport;
  /** Stops timers, sessions and connections; safe to call twice. */
  close(): Promise<void>;
}
