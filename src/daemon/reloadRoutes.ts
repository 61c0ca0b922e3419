import { Hono } from "hono";
import { raceTimeout } from "../core/process/index.ts";
import type { ReloadOutcome, WorkerConfigReload } from "./configReload.ts";

/** How long `agentd reload` waits for the supervisor's config child and the worker's re-read. */
const RELOAD_TIMEOUT_MS = 15_000;

/**
 * `POST /api/admin/reload` (loopback peers only): the same reload as SIGHUP to the supervisor, which
 * checks the file, renews its watchdog and forwards the signal here; answers with the worker's outcome.
 */
export function createReloadRoutes(options: {
  reloader: () => WorkerConfigReload | undefined;
  /** Asks the supervisor to reload (it checks the file and renews its watchdog first); undefined without one. */
  askSupervisor: (() => void) | undefined;
}): Hono {
  const app = new Hono();
  app.post("/", async (c) => {
    const reloader = options.reloader();
    if (!reloader) return c.json({ result: "failed", problem: "the worker is still starting" } satisfies ReloadOutcome, 503);
    // A worker run without a supervisor has no watchdog to renew: it re-reads the file itself.
    if (!options.askSupervisor) return c.json(await reloader.reload());
    const outcome = reloader.next();
    options.askSupervisor();
    const answer = await raceTimeout(outcome, RELOAD_TIMEOUT_MS);
    if (answer === "timeout")
      return c.json({ result: "failed", problem: `no reload within ${RELOAD_TIMEOUT_MS / 1000}s` } satisfies ReloadOutcome, 504);
    return c.json(answer);
  });
  return app;
}
