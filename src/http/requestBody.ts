import type { z } from "zod";
import { AgentdError } from "../core/errors/index.ts";

/** A body still arriving after this long is refused: a slow sender must not hold a connection forever. */
const BODY_DEADLINE_MS = 60_000;

/**
 * `reading` (a request body), or 408 request_timeout when it has not arrived within the deadline;
 * `andThen` (a parse), when given, turns what was read into the result, its throw into a rejection.
 * One promise and one timer, without raceTimeout's race and async layers: every proxied request
 * reads its body through here.
 */
export function withinDeadline<T>(reading: Promise<T>, deadlineMs?: number): Promise<T>;
export function withinDeadline<T, R>(reading: Promise<T>, deadlineMs: number | undefined, andThen: (value: T) => R): Promise<R>;
export function withinDeadline<T, R>(reading: Promise<T>, deadlineMs = BODY_DEADLINE_MS, andThen?: (value: T) => R): Promise<T | R> {
  return new Promise<T | R>((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(new AgentdError("request_timeout", `The request body did not arrive within ${deadlineMs / 1000} s`));
    }, deadlineMs);
    reading.then(
      (value) => {
        clearTimeout(timer);
        // Refused already: nobody waits for a body that comes after, so it is not parsed.
        if (late) return;
        if (!andThen) resolve(value);
        else
          try {
            resolve(andThen(value));
          } catch (error) {
            reject(error);
          }
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Every route reads its body here, so one mistake gets one code everywhere: `invalid_json` for a
 * body that is not a JSON object, `invalid_request` (with `param`) for one that fails the schema.
 */
export interface BodyOptions {
  /** Also accept form posts (the page's buttons post forms). */
  form?: boolean;
}

/** `text` as a JSON object, or `invalid_json`. */
export function parseJsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AgentdError("invalid_json", `The request body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new AgentdError("invalid_json", "The request body must be a JSON object");
  return value as Record<string, unknown>;
}

/** A request's body as an object: form fields or a JSON object; an empty body is `{}`. */
export async function readObjectBody(request: Request, options: BodyOptions = {}): Promise<Record<string, unknown>> {
  const type = request.headers.get("content-type") ?? "";
  if (options.form && (type.includes("application/x-www-form-urlencoded") || type.includes("multipart/form-data"))) {
    return Object.fromEntries(await withinDeadline(request.formData()));
  }
  const text = await withinDeadline(request.text());
  return text.trim() === "" ? {} : parseJsonObject(text);
}

/** The body checked against a schema; a mismatch names each wrong field, as `path: message`. */
export async function readValidatedBody<S extends z.ZodType>(request: Request, schema: S, options: BodyOptions = {}): Promise<z.infer<S>> {
  const parsed = schema.safeParse(await readObjectBody(request, options));
  if (parsed.success) return parsed.data;
  throw schemaMismatch(parsed.error.issues);
}

/** `invalid_request` naming the first wrong field as `param` (`tools[1].name`, or an unknown key). */
export function schemaMismatch(zodIssues: readonly z.core.$ZodIssue[]): AgentdError {
  const issues = zodIssues.map((issue) => ({ path: fieldPath(issue), message: issue.message }));
  const summary = issues.map((i) => `${i.path || "body"}: ${i.message}`).join("; ");
  return new AgentdError("invalid_request", `Invalid request body: ${summary}`, {
    param: issues[0]?.path || undefined,
    details: { issues },
  });
}

function fieldPath(issue: z.core.$ZodIssue): string {
  const path = issue.code === "unrecognized_keys" && issue.keys[0] !== undefined ? [...issue.path, issue.keys[0]] : issue.path;
  let text = "";
  for (const key of path) text += typeof key === "number" ? `[${key}]` : text ? `.${String(key)}` : String(key);
  return text;
}
