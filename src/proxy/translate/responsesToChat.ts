import { invalidRequest, unsupportedParameter } from "../upstream/proxyError.ts";
import { noteDropped } from "./droppedFields.ts";
import { inputToMessages } from "./responsesInputToChat.ts";
import { toolsToChat } from "./responsesTools.ts";

/**
 * Translates a Responses API request into a Chat Completions request for a chat-only upstream.
 * Degrade, report, never refuse what does not change the answer's shape: a field is mapped where
 * Chat Completions has a form for it, else dropped and named in `dropped`; a 400 naming the field
 * only where dropping it would change what the client gets back.
 */

type Json = Record<string, unknown>;

export type { ChatMessage } from "./responsesInputToChat.ts";
export { inputToMessages } from "./responsesInputToChat.ts";

/** Chat Completions has the same field with the same meaning (a provider that rejects one loses it as a learned quirk). */
const SAME = ["temperature", "top_p", "user", "service_tier", "store", "metadata", "prompt_cache_key", "safety_identifier"] as const;
/** Handled below, or with nothing to carry (stream_options only tunes the SSE framing; previous_response_id is resolved by the route). */
const HANDLED = new Set<string>([
  ...SAME,
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "max_output_tokens",
  "parallel_tool_calls",
  "reasoning",
  "stream",
  "text",
  "top_logprobs",
  "include",
  "stream_options",
  "previous_response_id",
]);
/** Chat Completions has no form for them, and the answer keeps its shape without them. */
const DROPPED = new Set(["client_metadata", "max_tool_calls", "truncation"]);
/** Values that ask for nothing beyond the default. */
const NEUTRAL: Record<string, unknown> = { background: false, truncation: "disabled" };

const LOGPROBS_INCLUDE = "message.output_text.logprobs";

function textFormatToChat(text: unknown): unknown {
  const format = (text as Json)?.format as Json | undefined;
  if (!format || format.type === "text") return undefined;
  if (format.type === "json_object") return { type: "json_object" };
  if (format.type === "json_schema") {
    return {
      type: "json_schema",
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(format.strict !== undefined ? { strict: format.strict } : {}),
        ...(format.description ? { description: format.description } : {}),
      },
    };
  }
  throw unsupportedParameter("text.format", `format '${String(format.type)}' cannot be translated`);
}

/**
 * Builds the chat request. `history` is the conversation before this request's input (from
 * previous_response_id), already as Responses input items, item references resolved.
 */
export function responsesToChat(request: Json, history: readonly unknown[] = [], dropped: string[] = []): Json {
  for (const [key, value] of Object.entries(request)) {
    if (HANDLED.has(key) || value === null || value === undefined || NEUTRAL[key] === value) continue;
    if (DROPPED.has(key)) noteDropped(dropped, key);
    else throw unsupportedParameter(key, "not supported when the upstream speaks Chat Completions");
  }
  if (typeof request.model !== "string" || !request.model) throw invalidRequest("'model' is required", "model");
  if (request.input === undefined) throw invalidRequest("'input' is required", "input");
  const input = typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input;
  if (!Array.isArray(input)) throw invalidRequest("'input' must be a string or an array of items", "input");
  const messages = inputToMessages([...history, ...input], dropped);
  if (typeof request.instructions === "string" && request.instructions) messages.unshift({ role: "system", content: request.instructions });
  const chat: Json = { model: request.model, messages };
  const { tools, choice } = toolsToChat(request.tools, request.tool_choice, dropped);
  // Chat upstreams reject tool_choice and parallel_tool_calls without tools.
  if (tools.length > 0) {
    chat.tools = tools;
    if (choice !== undefined) chat.tool_choice = choice;
    if (typeof request.parallel_tool_calls === "boolean") chat.parallel_tool_calls = request.parallel_tool_calls;
  }
  if (request.max_output_tokens !== undefined && request.max_output_tokens !== null) chat.max_completion_tokens = request.max_output_tokens;
  for (const key of SAME) {
    if (request[key] !== undefined && request[key] !== null) chat[key] = request[key];
  }
  logprobsToChat(request, chat, dropped);
  const effort = (request.reasoning as Json | undefined)?.effort;
  if (typeof effort === "string") chat.reasoning_effort = effort;
  const format = textFormatToChat(request.text);
  if (format) chat.response_format = format;
  const verbosity = (request.text as Json | undefined)?.verbosity;
  if (typeof verbosity === "string") chat.verbosity = verbosity;
  if (request.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

/** `top_logprobs` and the logprobs include become chat `logprobs`; other includes have no chat form. */
function logprobsToChat(request: Json, chat: Json, dropped: string[]): void {
  const include = request.include;
  if (include !== undefined && include !== null && !Array.isArray(include)) throw invalidRequest("'include' must be an array", "include");
  const wantsLogprobs = (include ?? []).includes(LOGPROBS_INCLUDE);
  if ((include ?? []).some((entry: unknown) => entry !== LOGPROBS_INCLUDE)) noteDropped(dropped, "include");
  if (typeof request.top_logprobs === "number") {
    chat.logprobs = true;
    chat.top_logprobs = request.top_logprobs;
  } else if (wantsLogprobs) chat.logprobs = true;
}
