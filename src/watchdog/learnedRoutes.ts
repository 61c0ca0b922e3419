import type { Database } from "bun:sqlite";
import { Hono } from "hono";
import { AgentdError } from "../core/errors/index.ts";
import { PatternMemory } from "./decide/patternMemory.ts";

/**
 * `/api/watchdog/learned`: the fixes tier 2 learned, per component and pattern, with the incidents
 * they came from (`?component=` narrows it); DELETE `?component=[&pattern=]` forgets them, so the
 * next incident goes to the model or a person again. The supervisor reads the store on every
 * decision, so a forget takes effect at once.
 */
export function learnedRoutes(db: Database): Hono {
  const memory = new PatternMemory(db);
  const app = new Hono();
  app.get("/", (c) => c.json({ learned: memory.learned(c.req.query("component") || undefined) }));
  app.delete("/", (c) => {
    const component = c.req.query("component");
    if (!component)
      throw new AgentdError(
        "invalid_query",
        "Forgetting needs ?component= (check:svc, log:/var/log/app.log, …), and optionally &pattern=",
        {
          param: "component",
        },
      );
    return c.json({ forgotten: memory.forget(component, c.req.query("pattern") || undefined) });
  });
  return app;
}
