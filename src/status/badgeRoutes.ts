import { Hono } from "hono";
import { checkBadgeStatus, renderBadge } from "./badgeSvg.ts";
import type { StatusSource } from "./statusSnapshot.ts";

function svg(body: string, status: 200 | 404 = 200): Response {
  // Badges are embedded by README renderers and dashboards that re-fetch them: never cache.
  return new Response(body, {
    status,
    headers: {
      "Content-Type": "image/svg+xml; charset=utf-8",
      "Cache-Control": "no-cache, max-age=0",
      "X-Content-Type-Options": "nosniff",
    },
  });
}

/**
 * GET /badge.svg (the host's verdict, as the page's banner), /badge/<check>.svg (one of agentd's
 * own /health checks or components) and /badge/check/<name>.svg (one watchdog check).
 */
export function badgeRoutes(source: Pick<StatusSource, "health" | "section">): Hono {
  const app = new Hono();
  app.get("/badge.svg", async () => {
    const verdict = await source.section("verdict");
    return svg(renderBadge("agentd", verdict.status, verdict.status));
  });
  app.get("/badge/check/:file", async (c) => {
    const file = c.req.param("file");
    const name = file.endsWith(".svg") ? file.slice(0, -4) : file;
    const watchdog = await source.section("watchdog");
    const row = watchdog.rows.find((check) => check.name === name);
    if (!file.endsWith(".svg") || !row) return svg(renderBadge(name, "unknown check", "unknown"), 404);
    return svg(renderBadge(name, row.state, row.state === "unknown" ? "unknown" : row.state));
  });
  app.get("/badge/:file", async (c) => {
    const file = c.req.param("file");
    if (!file.endsWith(".svg")) return svg(renderBadge("badge", "use .svg", "unknown"), 404);
    const name = file.slice(0, -4);
    const status = checkBadgeStatus(await source.health(), name);
    return status ? svg(renderBadge(name, status, status)) : svg(renderBadge(name, "unknown check", "unknown"), 404);
  });
  return app;
}
