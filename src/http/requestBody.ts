import type { z } from "zod";
import { AgentdError } from "../core/errors/index.ts";

export interface BodyOptions {
  /** Also accept form posts (the page's buttons post forms). */
  form?: boolean;
  /** Codes of the two failures; every route keeps the codes its clients already match on. */
  codes?: { json: string; invalid: string };
}

const DEFAULT_CODES = { json: "invalid_arguments", invalid: "invalid_arguments" };

/** A request's body as a value: form fields or JSON; an empty body is `{}`. */
export async function readBodyValue(request: Request, options: BodyOptions = {}): Promise<unknown> {
  const codes = options.codes ?? DEFAULT_CODES;
  const type = request.headers.get("content-type") ?? "";
  if (options.form && (type.includes("application/x-www-form-urlencoded") || type.includes("multipart/form-data"))) {
    return Object.fromEntries(await request.formData());
  }
  const text = await request.text();
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AgentdError(codes.json, `The request body is not valid JSON: ${(error as Error).message}`, { status: 400 });
  }
}

/** The body checked against a schema; a mismatch names each wrong field, as `path: message`. */
export async function readValidatedBody<S extends z.ZodType>(request: Request, schema: S, options: BodyOptions = {}): Promise<z.infer<S>> {
  const codes = options.codes ?? DEFAULT_CODES;
  const parsed = schema.safeParse(await readBodyValue(request, options));
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message }));
  throw new AgentdError(codes.invalid, `Invalid request body: ${issues.map((i) => `${i.path || "body"}: ${i.message}`).join("; ")}`, {
    status: 400,
    details: { issues },
  });
}
