import { Hono } from "hono";
import { buildHealthDocument, collectChecks, type HealthSource } from "../core/health/index.ts";

export interface ProbeDeps {
  version: string;
  startedAt: number;
  notes: () => string[];
  healthSources: Record<string, HealthSource>;
  /** Dependencies agentd needs to serve (store writable, config loaded): each returns a reason when not ready. */
  readiness: () => string[];
  requestsTotal: () => number;
  /** The host's verdict (as `agentd status` and the page give it), carried beside agentd's own status in /health. */
  verdict?: () => Promise<{ status: string; reason: string; reasons: string[] }>;
}

export async function healthDocument(deps: ProbeDeps) {
  return buildHealthDocument({
    version: deps.version,
    checks: await collectChecks(deps.healthSources),
    notes: deps.notes(),
    uptimeS: (Date.now() - deps.startedAt) / 1000,
    memoryMb: process.memoryUsage.rss() / 1048576,
    requestsTotal: deps.requestsTotal(),
  });
}

export function probeRoutes(deps: ProbeDeps): Hono {
  const app = new Hono();
  // The process only: a provider outage must never make a supervisor restart a healthy worker.
  app.get("/livez", (c) => c.text("ok\n"));
  app.get("/readyz", (c) => {
    const reasons = deps.readiness();
    return reasons.length === 0 ? c.text("ready\n") : c.text(`not ready: ${reasons.join("; ")}\n`, 503);
  });
  app.get("/health", async (c) => {
    const document = await healthDocument(deps);
    c.header("Cache-Control", "no-store");
    // The status code stays agentd's own: the supervisor and container runtimes restart on it, and a failing watched service is no reason to.
    const verdict = deps.verdict ? { verdict: await deps.verdict() } : {};
    return c.body(JSON.stringify({ ...document, ...verdict }), document.status === "fail" ? 503 : 200, {
      "Content-Type": "application/health+json",
    });
  });
  return app;
}
