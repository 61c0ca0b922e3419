import type { Server } from "bun";
import { createApp, type AppDeps } from "../../src/http/app.ts";
import { createLogger } from "../../src/core/log/index.ts";

export interface RunningApp {
  url: string;
  server: Server<undefined>;
  deps: AppDeps;
  stop(): Promise<void>;
}

/** The app as the worker composes it, with checks and mounts a test can replace. */
export function appDeps(overrides: Partial<AppDeps> = {}): AppDeps {
  const base: AppDeps = {
    version: "9.9.9-test",
    startedAt: Date.now() - 5_000,
    notes: () => ["a note for the operator"],
    readiness: () => [],
    healthSources: { store: () => [{ key: "store:writable", status: "pass", observedValue: true }] },
    logger: createLogger("test.web"),
    bodyLimitBytes: 4096,
    metricFamilies: () => [{ name: "agentd_worker_restarts_total", help: "Restarts.", type: "counter", samples: [{ value: 3 }] }],
    mounts: [],
    ...overrides,
  };
  return base;
}

/** createApp served by Bun.serve on 127.0.0.1, a free port, through the fetch the worker serves (hot routes included). */
export function startApp(overrides: Partial<AppDeps> = {}): RunningApp {
  const deps = appDeps(overrides);
  const { fetch } = createApp(deps);
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request, bunServer) => fetch(request, bunServer) });
  return { url: `http://127.0.0.1:${server.port}`, server, deps, stop: () => server.stop(true) };
}
