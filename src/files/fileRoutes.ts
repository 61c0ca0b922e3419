import { Hono } from "hono";
import type { z } from "zod";
import { AgentdError } from "../errors/index.ts";
import { createLogger } from "../log/index.ts";
import { createErrorHandler } from "../web/errorResponse.ts";
import { readFileArgs, writeFileArgs } from "./fileSchemas.ts";
import { readLocalFile, writeLocalFile } from "./localFiles.ts";

async function parseBody<S extends z.ZodType>(request: Request, schema: S): Promise<z.infer<S>> {
  let body: unknown;
  try {
    body = JSON.parse(await request.text());
  } catch {
    throw new AgentdError("invalid_arguments", "The request body is not valid JSON", { status: 400 });
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message }));
    throw new AgentdError("invalid_arguments", issues.map((i) => `${i.path || "body"}: ${i.message}`).join("; "), { status: 400, details: { issues } });
  }
  return parsed.data;
}

/**
 * `/api/files`: POST /read {path, offset?, max_bytes?, encoding?} and POST /write {path, content,
 * encoding?, append?, create_dirs?, mode?}; the shapes of the agent's read_file/write_file, so a
 * hop's local side can read and write files on the remote host.
 */
export function createFileRoutes(): Hono {
  const app = new Hono();
  app.onError(createErrorHandler(createLogger("files.http")));
  app.post("/read", async (c) => c.json(await readLocalFile(await parseBody(c.req.raw, readFileArgs))));
  app.post("/write", async (c) => c.json(await writeLocalFile(await parseBody(c.req.raw, writeFileArgs))));
  return app;
}
