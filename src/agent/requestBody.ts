import type { Context } from "hono";
import type { z } from "zod";
import { readValidatedBody } from "../http/requestBody.ts";

/** A JSON or form-encoded body checked against a schema. */
export function readRequestBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  return readValidatedBody(c.req.raw, schema, { form: true });
}
