import { Hono } from "hono";
import { z } from "zod";
import { AgentdError } from "../core/errors/index.ts";
import { createLogger } from "../core/log/index.ts";
import { createErrorHandler } from "../http/errorResponse.ts";
import { readValidatedBody } from "../http/requestBody.ts";
import { presentedToken } from "../http/requestToken.ts";
import type { PtyManager } from "./ptyManager.ts";
import { closeSessionArgs, execCommandArgs, writeStdinArgs } from "./ptySchemas.ts";
import type { RemoteTerminals, TerminalTargets } from "./terminalTarget.ts";

/** `target`: "local" (the default) or a connected hop's name, whose remote agentd runs the terminal. */
const target = z.string().min(1).optional();
const execBody = execCommandArgs.extend({ target });
const stdinBody = writeStdinArgs.omit({ session_id: true }).extend({ target });

/**
 * `/api/pty`: the same operations and shapes as the agent tools, so a hop's local side can drive
 * a remote agentd's terminals. Errors are the one JSON error shape, with the PTY error codes.
 */
export function createPtyRoutes(manager: PtyManager, targets?: TerminalTargets): Hono {
  const app = new Hono();
  app.onError(createErrorHandler(createLogger("pty.http")));
  const local: RemoteTerminals = {
    exec: (args, signal) => manager.exec(args, signal),
    writeStdin: (args, signal) => manager.writeStdin(args, signal),
    listSessions: async () => manager.list(),
    closeSession: (args) => manager.closeSession(args),
  };
  const on = (name: string | undefined): RemoteTerminals => {
    if (name === undefined || name === "local") return local;
    if (!targets)
      throw new AgentdError("unknown_target", `No target named ${name}; terminals run on "local" or on a connected hop`, {
        param: "target",
      });
    return targets(name);
  };

  app.post("/", async (c) => {
    const { target: name, ...args } = await readValidatedBody(c.req.raw, execBody);
    return c.json(await on(name).exec(args, c.req.raw.signal));
  });

  // A hop's sudo-approved command: started without no_new_privs. The worker refuses this route to
  // any caller descended from agentd (PRIVILEGED_PTY_PATH is among its guarded routes).
  app.post("/privileged", async (c) => {
    const args = await readValidatedBody(c.req.raw, execCommandArgs);
    const credential = presentedToken(c);
    return c.json(await manager.exec(args, c.req.raw.signal, { privileged: true, ...(credential ? { credential } : {}) }));
  });

  app.post("/:id/stdin", async (c) => {
    const { target: name, ...args } = await readValidatedBody(c.req.raw, stdinBody);
    return c.json(await on(name).writeStdin({ ...args, session_id: c.req.param("id") }, c.req.raw.signal));
  });

  app.get("/", async (c) => c.json({ sessions: await on(c.req.query("target")).listSessions(c.req.raw.signal) }));

  app.delete("/:id", async (c) => {
    const force = c.req.query("force");
    if (force !== undefined && force !== "true" && force !== "false")
      throw new AgentdError("invalid_query", "force: expected true or false", { param: "force" });
    const args = closeSessionArgs.parse({ session_id: c.req.param("id"), force: force === undefined ? undefined : force === "true" });
    return c.json(await on(c.req.query("target")).closeSession(args, c.req.raw.signal));
  });

  return app;
}
