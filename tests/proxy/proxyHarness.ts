/**
 * Test harness: a proxy from createProxy, served by Bun.serve on 127.0.0.1 port 0 at /v1 (admin
 * routes at /api/admin/proxy), an in-memory store, the real openai SDK as the client, and the
 * log lines captured for assertions.
 */
import OpenAI from "openai";
import { createApp } from "../../src/http/app.ts";
import { appDeps } from "../http/appHarness.ts";
import { parseLogLine, setLogSink, type LogRecord } from "../../src/core/log/index.ts";
import {
  createProxy,
  providerConfigSchema,
  proxyConfigSchema,
  proxyMigrations,
  socketHandlers,
  type Proxy as ProxyService,
} from "../../src/proxy/index.ts";
import { baseMigrations, openStore, type Database } from "../../src/core/store/index.ts";

export type ProviderInput = { name: string; base_url: string } & Record<string, unknown>;

export interface ProxyHarness {
  url: string;
  client: OpenAI;
  proxy: ProxyService;
  db: Database;
  logs: LogRecord[];
  /** Every request the server took, as "METHOD /path" (an upgrade as "GET /v1/responses upgrade"). */
  requests: string[];
  events(name: string): LogRecord[];
  close(): Promise<void>;
}

/** Fast retries unless a test says otherwise. */
const TEST_DEFAULTS = { retry_base_ms: 10, retry_max_ms: 40 };

/**
 * Every harness open at once gets the log lines (the log sink is one per process); each keeps the
 * lines of its own providers and those naming none (or "none": no provider answered), so cases
 * running side by side stay apart when their providers' names differ.
 */
const openHarnesses = new Set<{ providers: ReadonlySet<string>; logs: LogRecord[] }>();
let sinkInstalled = false;

function collectLogs(providers: ReadonlySet<string>): { logs: LogRecord[]; stop(): void } {
  if (!sinkInstalled) {
    sinkInstalled = true;
    setLogSink((line) => {
      const record = parseLogLine(line);
      if (!record) return;
      for (const harness of openHarnesses)
        if (typeof record.provider !== "string" || record.provider === "none" || harness.providers.has(record.provider))
          harness.logs.push(record);
    });
  }
  const entry = { providers, logs: [] as LogRecord[] };
  openHarnesses.add(entry);
  return { logs: entry.logs, stop: () => openHarnesses.delete(entry) };
}

export function startProxy(options: { providers: ProviderInput[]; config?: Record<string, unknown>; db?: Database }): ProxyHarness {
  const collector = collectLogs(new Set(options.providers.map((p) => String((p as { name?: unknown }).name))));
  const logs = collector.logs;
  const db = options.db ?? openStore({ path: ":memory:", migrations: [...baseMigrations, ...proxyMigrations] });
  const config = proxyConfigSchema().parse({ ...TEST_DEFAULTS, ...options.config });
  const proxy = createProxy({ providers: options.providers.map((p) => providerConfigSchema().parse(p)), config, db });
  // Served as the worker serves it: the app with its request gate, the model calls on the hot lane.
  const { fetch: appFetch } = createApp(
    appDeps({
      bodyLimitBytes: 32 * 1024 * 1024,
      mounts: [
        { path: "/v1", app: proxy.routes, hot: proxy.hotRoutes, bodyLimitBytes: config.max_body_bytes },
        { path: "/api/admin/proxy", app: proxy.adminRoutes, loopbackOnly: true },
      ],
    }),
  );
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (request, bunServer) => {
      const upgrade = request.headers.get("upgrade") ? ` ${request.headers.get("upgrade")!.toLowerCase()}` : "";
      requests.push(`${request.method} ${new URL(request.url).pathname}${upgrade}`);
      return appFetch(request, bunServer);
    },
    websocket: socketHandlers,
    idleTimeout: 0,
  });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    client: new OpenAI({ apiKey: "client-key", baseURL: `${url}/v1`, maxRetries: 0 }),
    proxy,
    db,
    logs,
    requests,
    events: (name) => {
      // A request's line is logged on the turn after it finished: a test reading it at once counts it first.
      proxy.countFinished();
      return logs.filter((r) => r.event === name);
    },
    close: async () => {
      collector.stop();
      await proxy.close();
      await server.stop(true);
      if (!options.db) db.close();
    },
  };
}
