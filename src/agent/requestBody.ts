import type { Context } from "hono";
import type { z } from "zod";
import { AgentdError } from "../errors/index.ts";

/** Reads a JSON or form-encoded body (the page's buttons post forms) and checks it against a schema. */
export async function readRequestBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const type = c.req.header("content-type") ?? "";
  let body: unknown;
  try {
    if (type.includes("application/x-www-form-urlencoded") || type.includes("multipart/form-data")) body = await c.req.parseBody();
    else {
      const text = await c.req.text();
      body = text.trim() === "" ? {} : JSON.parse(text);
    }
  } catch (error) {
    throw new AgentdError("invalid_json", `The request body is not valid JSON: ${(error as Error).message}`, { status: 400 });
  }
  const result = schema.safeParse(body);
  if (!result.success) {
    const message = result.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
    throw new AgentdError("invalid_request", `Invalid request body: ${message}`, { status: 400 });
  }
  return result.data;
}
