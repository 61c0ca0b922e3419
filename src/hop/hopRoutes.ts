import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { z } from "zod";
import { AgentdError, errorBody, errorMessage } from "../core/errors/index.ts";
import { createLogger } from "../core/log/index.ts";
import { runInBackground } from "../core/process/index.ts";
import { createErrorHandler } from "../http/errorResponse.ts";
import { readValidatedBody } from "../http/requestBody.ts";
import type { HopProgress } from "./hopProgress.ts";
import type { HopManager } from "./hopManager.ts";

const openRequest = z.strictObject({
  destination: z.string().min(1),
  via: z.union([z.array(z.string().min(1)), z.string()]).optional(),
  identity: z.string().min(1).optional(),
  accept_new: z.boolean().optional(),
  name: z.string().min(1).optional(),
});

// Upload progress comes per chunk; clients need a few updates a second.
const PROGRESS_EVERY_MS = 100;

async function readOpenRequest(request: Request) {
  const body = await readValidatedBody(request, openRequest);
  const via = typeof body.via === "string" ? body.via.split(",").filter(Boolean) : body.via;
  return { ...body, via };
}

/**
 * /api/hops. POST / opens a hop: with `Accept: text/event-stream` it streams `progress` events
 * ({step, message, bytes?, total?}) then one `hop` event (the HopInfo) or one `error` event
 * ({error:{message,type,param,code}}); otherwise it answers 201 {hop} once the hop is up. GET / lists,
 * GET /:name shows one, DELETE /:name closes (`?stop_remote=1` also stops the remote agentd).
 * The hop keeps opening if the client goes away: the daemon owns it.
 */
export function createHopRoutes(manager: HopManager, list: () => unknown[] = () => manager.list()): Hono {
  const app = new Hono();
  const log = createLogger("hop.http");
  app.onError(createErrorHandler(log));

  app.post("/", async (c) => {
    const request = await readOpenRequest(c.req.raw);
    if (!(c.req.header("accept") ?? "").includes("text/event-stream")) {
      return c.json({ hop: await manager.open(request) }, 201);
    }
    return streamSSE(c, async (stream) => {
      let lastUpload = 0;
      const send = (event: HopProgress) => {
        if (event.step === "upload" && event.bytes !== undefined && event.bytes < (event.total ?? 0)) {
          if (Date.now() - lastUpload < PROGRESS_EVERY_MS) return;
          lastUpload = Date.now();
        }
        // A client gone mid-open fails the write: logged and counted, the open goes on.
        runInBackground(
          "hop.progress_write",
          () => stream.writeSSE({ event: "progress", data: JSON.stringify(event) }),
          { step: event.step },
          log,
        );
      };
      try {
        const hop = await manager.open(request, send);
        await stream.writeSSE({ event: "hop", data: JSON.stringify(hop) });
      } catch (error) {
        const failure = error instanceof AgentdError ? error : new AgentdError("internal_error", errorMessage(error));
        await stream.writeSSE({ event: "error", data: JSON.stringify(errorBody(failure)) });
      }
    });
  });

  app.get("/", (c) => c.json({ hops: list() }));
  app.get("/:name", (c) => c.json({ hop: manager.get(c.req.param("name")) }));
  app.delete("/:name", async (c) => {
    const flag = c.req.query("stop_remote");
    return c.json(await manager.closeHop(c.req.param("name"), { stopRemote: flag === "1" || flag === "true" }));
  });
  return app;
}
