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

/** GET /badge.svg (overall health) and /badge/<check>.svg (one check or component). */
export function badgeRoutes(source: Pick<StatusSource, "health">): Hono {
  const app = new Hono();
  app.get("/badge.svg", async () => {
    const health = await source.health();
    return svg(renderBadge("agentd", health.status, health.status));
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
