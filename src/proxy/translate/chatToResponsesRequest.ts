import { invalidRequest, unsupportedParameter } from "../upstream/proxyError.ts";
import { noteDropped } from "./droppedFields.ts";

/**
 * Translates a Chat Completions request into a Responses API request, for a model only a
 * Responses upstream serves. Degrade, report, never refuse what does not change the answer's
 * shape: `stop` is honoured by the proxy (see stopSequences.ts), sampling knobs the Responses API
 * lacks are dropped and named in `dropped`; a 400 naming the field only where the answer would
 * change shape (n > 1, audio).
 */

type Json = Record<string, unknown>;

/** Carried over under the same name and meaning. */
const SAME = [
  "temperature",
  "top_p",
  "parallel_tool_calls",
  "user",
  "service_tier",
  "metadata",
  "prompt_cache_key",
  "safety_identifier",
] as const;
/** Handled below. */
const HANDLED = new Set<string>([
  "model",
  "messages",
  "tools",
  "tool_choice",
  "max_tokens",
  "max_completion_tokens",
  "stream",
  "stream_options",
  "reasoning_effort",
  "response_format",
  "verbosity",
  "store",
  "stop",
  "logprobs",
  "top_logprobs",
  ...SAME,
]);
/** Sampling knobs the Responses API has no form for; the answer keeps its shape without them. */
const DROPPED = new Set(["seed", "frequency_penalty", "presence_penalty", "logit_bias"]);
/** Values that ask for nothing beyond the default: many clients send them always, so they need no translation. */
const NEUTRAL: Record<string, unknown> = { n: 1, logprobs: false, frequency_penalty: 0, presence_penalty: 0 };

/** The stop sequences of a chat request (a string or up to four strings). */
export function stopSequences(chat: Json): string[] {
  const stop = chat.stop;
  if (typeof stop === "string") return stop ? [stop] : [];
  if (Array.isArray(stop)) return stop.filter((s): s is string => typeof s === "string" && s !== "");
  return [];
}

export interface ResponsesRequestOptions {
  /**
   * Ask for a reasoning summary with the effort: OpenAI's models return their reasoning only as a
   * summary, and only when asked, and a Messages client that asked for thinking shows it.
   */
  reasoningSummary?: boolean;
}

export function chatToResponsesRequest(chat: Json, dropped: string[] = [], options: ResponsesRequestOptions = {}): Json {
  for (const [key, value] of Object.entries(chat)) {
    if (HANDLED.has(key) || value === null || value === undefined || NEUTRAL[key] === value) continue;
    if (DROPPED.has(key)) {
      noteDropped(dropped, key);
      continue;
    }
    throw unsupportedParameter(key, "not supported when the upstream speaks the Responses API");
  }
  if (chat.stop !== undefined && chat.stop !== null && typeof chat.stop !== "string" && !Array.isArray(chat.stop))
    throw invalidRequest("'stop' must be a string or an array of strings", "stop");
  if (typeof chat.model !== "string" || !chat.model) throw invalidRequest("'model' is required", "model");
  if (!Array.isArray(chat.messages)) throw invalidRequest("'messages' must be an array", "messages");
  const { instructions, input } = messagesToInput(chat.messages);
  const request: Json = { model: chat.model, input };
  if (instructions !== undefined) request.instructions = instructions;
  if (Array.isArray(chat.tools) && chat.tools.length > 0) {
    request.tools = chat.tools.map(toolToResponses);
    if (chat.tool_choice !== undefined && chat.tool_choice !== null) request.tool_choice = toolChoiceToResponses(chat.tool_choice);
  }
  const maxTokens = chat.max_completion_tokens ?? chat.max_tokens;
  if (maxTokens !== undefined && maxTokens !== null) request.max_output_tokens = maxTokens;
  for (const key of SAME) {
    if (chat[key] !== undefined && chat[key] !== null) request[key] = chat[key];
  }
  if (typeof chat.reasoning_effort === "string")
    request.reasoning = { effort: chat.reasoning_effort, ...(options.reasoningSummary ? { summary: "auto" } : {}) };
  if (chat.logprobs === true) {
    request.include = ["message.output_text.logprobs"];
    if (typeof chat.top_logprobs === "number") request.top_logprobs = chat.top_logprobs;
  }
  const text = textSettings(chat.response_format, chat.verbosity);
  if (text) request.text = text;
  // Chat Completions does not keep answers unless asked; a Responses server does by default.
  request.store = chat.store === true;
  if (chat.stream === true) request.stream = true;
  return request;
}

/**
 * Leading system/developer messages become `instructions`; later ones stay in place as input
 * messages (the Responses API takes those roles there too).
 */
function messagesToInput(messages: readonly unknown[]): { instructions?: string; input: Json[] } {
  const leading: string[] = [];
  const input: Json[] = [];
  messages.forEach((raw, index) => {
    if (typeof raw !== "object" || raw === null) throw invalidRequest(`messages[${index}] must be an object`, `messages[${index}]`);
    const message = raw as Json;
    const where = `messages[${index}]`;
    switch (message.role) {
      case "system":
      case "developer":
        if (input.length === 0) leading.push(plainText(message.content, where));
        else input.push({ role: message.role, content: plainText(message.content, where) });
        break;
      case "user":
        input.push({ role: "user", content: userContent(message.content, where) });
        break;
      case "assistant":
        input.push(...assistantItems(message, where));
        break;
      case "tool":
        if (typeof message.tool_call_id !== "string" || !message.tool_call_id)
          throw invalidRequest(`${where} (tool) needs a tool_call_id`, `${where}.tool_call_id`);
        input.push({ type: "function_call_output", call_id: message.tool_call_id, output: plainText(message.content, where) });
        break;
      default:
        throw unsupportedParameter(`${where}.role`, `messages with role '${String(message.role)}' cannot be sent to a Responses upstream`);
    }
  });
  return { ...(leading.length > 0 ? { instructions: leading.join("\n\n") } : {}), input };
}

function assistantItems(message: Json, where: string): Json[] {
  const items: Json[] = [];
  const text = message.content === null || message.content === undefined ? "" : plainText(message.content, where);
  if (text) items.push({ role: "assistant", content: text });
  const calls = message.tool_calls;
  if (calls !== undefined && calls !== null && !Array.isArray(calls))
    throw invalidRequest(`${where}.tool_calls must be an array`, `${where}.tool_calls`);
  (calls ?? []).forEach((raw: unknown, callIndex: number) => {
    const call = raw as { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } };
    const at = `${where}.tool_calls[${callIndex}]`;
    if (call?.type !== undefined && call.type !== "function")
      throw unsupportedParameter(`${at}.type`, `tool calls of type '${String(call.type)}' cannot be sent to a Responses upstream`);
    if (typeof call?.id !== "string" || !call.id) throw invalidRequest(`${at} needs an id`, `${at}.id`);
    const args = call.function?.arguments;
    items.push({
      type: "function_call",
      call_id: call.id,
      name: String(call.function?.name ?? ""),
      arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}),
    });
  });
  return items;
}

/** Text of a string or an array of text parts; anything else cannot be carried. */
function plainText(content: unknown, where: string): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw invalidRequest(`${where}.content must be a string or an array of parts`, `${where}.content`);
  return content
    .map((raw, partIndex) => {
      const part = raw as Json;
      if (part?.type === "text") return String(part.text ?? "");
      if (part?.type === "refusal") return String(part.refusal ?? "");
      throw unsupportedParameter(
        `${where}.content[${partIndex}].type`,
        `content parts of type '${String(part?.type)}' are only allowed in user messages`,
      );
    })
    .join("");
}

function userContent(content: unknown, where: string): string | Json[] {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw invalidRequest(`${where}.content must be a string or an array of parts`, `${where}.content`);
  return content.map((raw, partIndex) => {
    const part = raw as Json;
    const at = `${where}.content[${partIndex}]`;
    if (part?.type === "text") return { type: "input_text", text: String(part.text ?? "") };
    if (part?.type === "image_url") {
      const image = part.image_url as { url?: unknown; detail?: unknown } | undefined;
      if (typeof image?.url !== "string") throw invalidRequest(`${at}.image_url.url must be a string`, `${at}.image_url.url`);
      return { type: "input_image", image_url: image.url, detail: typeof image.detail === "string" ? image.detail : "auto" };
    }
    throw unsupportedParameter(`${at}.type`, `content parts of type '${String(part?.type)}' cannot be sent to a Responses upstream`);
  });
}

function toolToResponses(raw: unknown, index: number): Json {
  const tool = raw as { type?: unknown; function?: Json };
  if (tool?.type !== "function" || typeof tool.function !== "object" || tool.function === null) {
    throw unsupportedParameter(
      `tools[${index}]`,
      `tools of type '${String(tool?.type)}' cannot be sent to a Responses upstream; only function tools can`,
    );
  }
  const fn = tool.function;
  // Responses makes function schemas strict unless told otherwise; Chat Completions does not.
  const out: Json = { type: "function", name: fn.name, strict: fn.strict === true };
  if (fn.description !== undefined && fn.description !== null) out.description = fn.description;
  if (fn.parameters !== undefined && fn.parameters !== null) out.parameters = fn.parameters;
  return out;
}

function toolChoiceToResponses(choice: unknown): unknown {
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  const object = choice as { type?: unknown; function?: { name?: unknown } };
  if (object?.type === "function" && typeof object.function?.name === "string") return { type: "function", name: object.function.name };
  throw unsupportedParameter("tool_choice", "only auto, none, required or a function tool can be chosen");
}

function textSettings(format: unknown, verbosity: unknown): Json | undefined {
  const text: Json = {};
  const f = format as Json | undefined | null;
  if (f && f.type === "json_object") text.format = { type: "json_object" };
  else if (f && f.type === "json_schema") {
    const schema = (f.json_schema ?? {}) as Json;
    text.format = {
      type: "json_schema",
      name: schema.name,
      schema: schema.schema,
      ...(schema.strict !== undefined ? { strict: schema.strict } : {}),
      ...(schema.description ? { description: schema.description } : {}),
    };
  } else if (f && f.type !== "text") throw unsupportedParameter("response_format", `format '${String(f.type)}' cannot be translated`);
  if (typeof verbosity === "string") text.verbosity = verbosity;
  return Object.keys(text).length > 0 ? text : undefined;
}
