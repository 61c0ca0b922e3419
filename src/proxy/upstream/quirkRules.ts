/**
 * Provider quirks: OpenAI-compatible servers reject different optional parameters (or their size,
 * as OpenAI does a `user` over 64 characters). These are the parameters the proxy may drop when a
 * provider refuses them — optional tuning and identifiers only, never something that changes what
 * the request means (messages, tools, response_format).
 */
const DROPPABLE_PARAMS = [
  "strict",
  "parallel_tool_calls",
  "stream_options",
  "reasoning_effort",
  "max_completion_tokens",
  "user",
  "seed",
  "store",
  "metadata",
  "service_tier",
  "logprobs",
  "top_logprobs",
  "frequency_penalty",
  "presence_penalty",
  "logit_bias",
  "prompt_cache_key",
  "safety_identifier",
  "verbosity",
] as const;

export type DroppableParam = (typeof DROPPABLE_PARAMS)[number];

const REJECTION =
  /unsupported|unrecognized|not supported|unknown|not permitted|not allowed|extra (inputs|fields?)|does not support|invalid (field|parameter|argument)|unexpected|too long|maximum length|above_max_length/i;

type ChatBody = Record<string, unknown> & { tools?: unknown };

/** Whether the request carries `param` (so a rejection can be about it). */
function carriesParam(body: ChatBody, param: string): boolean {
  if (param === "strict") {
    return (
      Array.isArray(body.tools) &&
      body.tools.some((tool) => (tool as { function?: Record<string, unknown> })?.function?.strict !== undefined)
    );
  }
  return body[param] !== undefined;
}

/**
 * Reads an upstream 400/422 for the optional parameter it rejects; undefined when the rejection is
 * about something else (then the error goes back to the client as it is).
 */
export function detectRejectedParam(status: number, errorBody: string, body: ChatBody): DroppableParam | undefined {
  if (status !== 400 && status !== 422) return undefined;
  if (!REJECTION.test(errorBody)) return undefined;
  // OpenAI names the parameter ("Invalid 'user': string too long", param "user"): trust that first.
  const named = namedParam(errorBody);
  if (named && carriesParam(body, named)) return named;
  for (const param of DROPPABLE_PARAMS) {
    if (!carriesParam(body, param)) continue;
    if (new RegExp(`(^|[^A-Za-z0-9_])${param}($|[^A-Za-z0-9_])`).test(errorBody)) return param;
  }
  return undefined;
}

function namedParam(errorBody: string): DroppableParam | undefined {
  try {
    const param = (JSON.parse(errorBody) as { error?: { param?: unknown } }).error?.param;
    return (DROPPABLE_PARAMS as readonly unknown[]).includes(param) ? (param as DroppableParam) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Removes (or, for max_completion_tokens, renames to the older max_tokens) each quirk's parameter;
 * returns the ones the body carried and lost, so the client hears about them.
 */
export function applyQuirks(body: ChatBody, quirks: Iterable<string>): string[] {
  const dropped: string[] = [];
  for (const quirk of quirks) {
    if (!carriesParam(body, quirk)) continue;
    if (quirk !== "max_completion_tokens") dropped.push(quirk);
    if (quirk === "strict") {
      if (Array.isArray(body.tools))
        for (const tool of body.tools) delete (tool as { function?: Record<string, unknown> })?.function?.strict;
    } else if (quirk === "max_completion_tokens") {
      if (body.max_completion_tokens !== undefined) {
        body.max_tokens ??= body.max_completion_tokens;
        delete body.max_completion_tokens;
      }
    } else delete body[quirk];
  }
  return dropped;
}
