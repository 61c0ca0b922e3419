import { Hono } from "hono";
import { createProxy, providerConfigSchema, proxyConfigSchema } from "../../src/proxy/index.ts";
import { openStore, type Database } from "../../src/core/store/index.ts";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { createLogger, setLogSink } from "../../src/core/log/index.ts";
import { HttpProxyAdmin } from "../../src/watchdog/actions/proxyAdmin.ts";
import { Watchdog } from "../../src/watchdog/watchdog.ts";
import type { ServedModels } from "../../src/watchdog/actions/providerAlternatives.ts";
import { watchdogConfigSchema, type WatchdogConfig } from "../../src/core/config/sections/watchdogConfig.ts";

export interface AdminCall {
  path: string;
  body: Record<string, unknown>;
}

/**
 * The worker's real proxy admin routes (a proxy with one provider named "primary") on loopback,
 * recording what the watchdog asked; `status` other than 200 makes every call answer that instead.
 */
export function startAdminRecorder(status = 200) {
  const calls: AdminCall[] = [];
  const db = openStore({ path: ":memory:", migrations: allMigrations });
  const proxy = createProxy({
    providers: [providerConfigSchema().parse({ name: "primary", base_url: "http://127.0.0.1:9/v1" })],
    config: proxyConfigSchema().parse({}),
    db,
  });
  const app = new Hono();
  app.use(async (c, next) => {
    const text = c.req.method === "POST" ? await c.req.raw.clone().text() : "";
    calls.push({ path: c.req.path, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
    if (status !== 200) return c.json({ error: { code: "refused", message: "refused by the test" } }, status as 404);
    return next();
  });
  app.route("/api/admin/proxy", proxy.adminRoutes);
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: app.fetch });
  return {
    calls,
    url: `http://127.0.0.1:${server.port}`,
    breakerState: () => proxy.status().find((p) => p.name === "primary")?.state,
    stop: () => {
      server.stop(true);
      void proxy.close().then(() => db.close());
    },
  };
}

export interface Harness {
  watchdog: Watchdog;
  db: Database;
  config: WatchdogConfig;
  logLines: string[];
  restarts: string[];
  /** The worker pid each restart was aimed at (undefined: whichever worker runs). */
  restartTargets: (number | undefined)[];
  clock: { now: number };
  health: { ok: boolean };
  /** Configured checks as the watchdog sees them: failing ones, and when each last passed. */
  checks: { failing: Set<string>; passedAt: Map<string, number> };
  /** The check runs now and passes (debounced ok). */
  passCheck(name: string): void;
  /** Log lines the watchdog wrote, parsed. */
  events(name: string): Array<Record<string, unknown>>;
  advance(ms: number): Promise<void>;
  close(): void;
}

export function createHarness(
  configInput: Record<string, unknown>,
  adminUrl?: string,
  options: { queueMax?: number; providers?: ServedModels[] } = {},
): Harness {
  const config = watchdogConfigSchema().parse(configInput);
  const db = openStore({ path: ":memory:", migrations: allMigrations });
  const logLines: string[] = [];
  setLogSink((line) => logLines.push(line));
  const restarts: string[] = [];
  const restartTargets: (number | undefined)[] = [];
  const clock = { now: Date.UTC(2030, 0, 15, 12) };
  const health = { ok: true };
  const checks = { failing: new Set<string>(), passedAt: new Map<string, number>() };
  const watchdog = new Watchdog({
    config,
    db,
    log: createLogger("watchdog"),
    worker: {
      restartWorker: async (reason, pid) => {
        restarts.push(reason);
        restartTargets.push(pid);
        return "restarted";
      },
    },
    proxy: new HttpProxyAdmin(() => adminUrl, undefined),
    health: () => ({ ok: health.ok, detail: {} }),
    checkFailing: (name) => checks.failing.has(name),
    checkPassedSince: (name, since) => !checks.failing.has(name) && (checks.passedAt.get(name) ?? Number.NEGATIVE_INFINITY) > since,
    secrets: ["sk-test-secret-key-123456"],
    now: () => clock.now,
    ...(options.queueMax !== undefined ? { queueMax: options.queueMax } : {}),
    ...(options.providers ? { providers: options.providers } : {}),
  });
  return {
    watchdog,
    db,
    config,
    logLines,
    restarts,
    restartTargets,
    clock,
    health,
    checks,
    passCheck: (name) => {
      checks.failing.delete(name);
      checks.passedAt.set(name, clock.now);
    },
    events: (name) => logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.event === name),
    advance: async (ms) => {
      clock.now += ms;
      await watchdog.tick();
    },
    close: () => db.close(),
  };
}

/** One JSON log line as the worker writes it. */
export function logLine(event: string, fields: Record<string, unknown> = {}, component = "proxy", level = "warn"): string {
  return JSON.stringify({ ts: new Date().toISOString(), level, component, event, ...fields });
}
