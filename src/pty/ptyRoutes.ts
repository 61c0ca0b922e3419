import { Hono } from "hono";
import { AgentdError } from "../core/errors/index.ts";
import { createLogger } from "../core/log/index.ts";
import { createErrorHandler } from "../http/errorResponse.ts";
import { readValidatedBody } from "../http/requestBody.ts";
import type { PtyManager } from "./ptyManager.ts";
import { closeSessionArgs, execCommandArgs, writeStdinArgs } from "./ptySchemas.ts";

const stdinBody = writeStdinArgs.omit({ session_id: true });

/**
 * `/api/pty`: the same operations and shapes as the agent tools, so a hop's local side can drive
 * a remote agentd's terminals. Errors are the one JSON error shape, with the PTY error codes.
 */
export function createPtyRoutes(manager: PtyManager): Hono {
  const app = new Hono();
  app.onError(createErrorHandler(createLogger("pty.http")));

  app.post("/", async (c) => {
    const args = await readValidatedBody(c.req.raw, execCommandArgs);
    return c.json(await manager.exec(args, c.req.raw.signal));
  });

  // A hop's sudo-approved command: started without no_new_privs. The worker refuses this route to
  // any caller descended from agentd (PRIVILEGED_PTY_PATH is among its guarded routes).
  app.post("/privileged", async (c) => {
    const args = await readValidatedBody(c.req.raw, execCommandArgs);
    return c.json(await manager.exec(args, c.req.raw.signal, { privileged: true }));
  });

  app.post("/:id/stdin", async (c) => {
    const args = await readValidatedBody(c.req.raw, stdinBody);
    return c.json(await manager.writeStdin({ ...args, session_id: c.req.param("id") }, c.req.raw.signal));
  });

  app.get("/", (c) => c.json({ sessions: manager.list() }));

  app.delete("/:id", async (c) => {
    const force = c.req.query("force");
    if (force !== undefined && force !== "true" && force !== "false")
      throw new AgentdError("invalid_query", "force: expected true or false", { param: "force" });
    const args = closeSessionArgs.parse({ session_id: c.req.param("id"), force: force === undefined ? undefined : force === "true" });
    return c.json(await manager.closeSession(args));
  });

  return app;
}
