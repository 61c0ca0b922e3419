/**
 * What OpenAI's API refuses that lenient servers take, as OpenAI answers it (status and error
 * body): a top-level parameter the endpoint does not know, and a `user` or `safety_identifier`
 * longer than 64 characters. A scripted upstream started with `strict: true` applies these
 * before its scripted reply.
 */

const CHAT_PARAMS = new Set([
  "model",
  "messages",
  "audio",
  "frequency_penalty",
  "function_call",
  "functions",
  "logit_bias",
  "logprobs",
  "max_completion_tokens",
  "max_tokens",
  "metadata",
  "modalities",
  "n",
  "parallel_tool_calls",
  "prediction",
  "presence_penalty",
  "prompt_cache_key",
  "reasoning_effort",
  "response_format",
  "safety_identifier",
  "seed",
  "service_tier",
  "stop",
  "store",
  "stream",
  "stream_options",
  "temperature",
  "tool_choice",
  "tools",
  "top_logprobs",
  "top_p",
  "user",
  "verbosity",
  "web_search_options",
]);

const RESPONSES_PARAMS = new Set([
  "model",
  "input",
  "instructions",
  "background",
  "conversation",
  "include",
  "max_output_tokens",
  "max_tool_calls",
  "metadata",
  "parallel_tool_calls",
  "previous_response_id",
  "prompt",
  "prompt_cache_key",
  "prompt_cache_retention",
  "reasoning",
  "safety_identifier",
  "service_tier",
  "store",
  "stream",
  "stream_options",
  "temperature",
  "text",
  "tool_choice",
  "tools",
  "top_logprobs",
  "top_p",
  "truncation",
  "user",
]);

const LIMITED_TO_64 = ["user", "safety_identifier"] as const;
const REASONING_SUMMARIES = new Set(["auto", "concise", "detailed"]);

function refuse(message: string, param: string | null, code: string | null): Response {
  return Response.json({ error: { message, type: "invalid_request_error", param, code } }, { status: 400 });
}

/** OpenAI's 400 for this request, or undefined when OpenAI would take it. */
export function strictOpenAiRefusal(api: string, body: Record<string, unknown> | undefined): Response | undefined {
  if (!body || (api !== "chat" && api !== "responses")) return undefined;
  const known = api === "chat" ? CHAT_PARAMS : RESPONSES_PARAMS;
  for (const key of Object.keys(body)) {
    if (known.has(key)) continue;
    return api === "chat"
      ? refuse(`Unrecognized request argument supplied: ${key}`, null, null)
      : refuse(`Unknown parameter: '${key}'.`, key, "unknown_parameter");
  }
  for (const key of LIMITED_TO_64) {
    const value = body[key];
    if (typeof value === "string" && value.length > 64)
      return refuse(
        `Invalid '${key}': string too long. Expected a string with maximum length 64, but got a string with length ${value.length} instead.`,
        key,
        "string_above_max_length",
      );
  }
  const summary = (body.reasoning as { summary?: unknown } | undefined)?.summary;
  if (api === "responses" && summary !== undefined && summary !== null && !REASONING_SUMMARIES.has(String(summary)))
    return refuse(
      `Invalid value: '${String(summary)}'. Supported values are: 'auto', 'concise', and 'detailed'.`,
      "reasoning.summary",
      "invalid_value",
    );
  return undefined;
}
