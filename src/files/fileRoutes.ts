import { Hono } from "hono";
import { createLogger } from "../core/log/index.ts";
import { createErrorHandler } from "../http/errorResponse.ts";
import { readValidatedBody } from "../http/requestBody.ts";
import { readFileArgs, writeFileArgs } from "./fileSchemas.ts";
import type { FileAccess } from "./textFileAccess.ts";

/**
 * `/api/files`: POST /read {path, offset?, max_bytes?, encoding?} and POST /write {path, content,
 * encoding?, append?, create_dirs?, mode?}; the shapes of the agent's read_file/write_file, so a
 * hop's local side can read and write files on the remote host.
 */
export function createFileRoutes(files: FileAccess): Hono {
  const app = new Hono();
  app.onError(createErrorHandler(createLogger("files.http")));
  app.post("/read", async (c) => c.json(await files.read(await readValidatedBody(c.req.raw, readFileArgs))));
  app.post("/write", async (c) => c.json(await files.write(await readValidatedBody(c.req.raw, writeFileArgs))));
  return app;
}
