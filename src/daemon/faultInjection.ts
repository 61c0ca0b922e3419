import { Hono } from "hono";
import type { Mount } from "../http/app.ts";
import type { Logger } from "../core/log/index.ts";

/** The environment variable that turns the fault routes on; nothing in the config file can. */
export const FAULTS_ENV = "AGENTD_DEBUG_FAULTS";

/**
 * Debug only: `POST /debug/faults/unhandled_rejection` and `/debug/faults/uncaught_exception`
 * make the worker meet an error nobody handles, so the process handlers can be proven on the
 * compiled binary (agentd has no known path that leaks one). Mounted only when the worker is
 * started with AGENTD_DEBUG_FAULTS=1, and then for loopback callers only.
 */
export function faultMounts(env: Record<string, string | undefined>, log: Logger): Mount[] {
  if (env[FAULTS_ENV] !== "1") return [];
  log.warn("debug.faults_enabled", { env: FAULTS_ENV, routes: "/debug/faults/*" });
  const app = new Hono();
  app.post("/unhandled_rejection", (c) => {
    // Deliberately floating: this is the fault being injected.
    void Promise.reject(new Error("injected unhandled rejection"));
    return c.json({ injected: "unhandled_rejection" }, 202);
  });
  app.post("/uncaught_exception", (c) => {
    setTimeout(() => {
      throw new Error("injected uncaught exception");
    }, 0);
    return c.json({ injected: "uncaught_exception" }, 202);
  });
  return [{ path: "/debug/faults", app, loopbackOnly: true }];
}
