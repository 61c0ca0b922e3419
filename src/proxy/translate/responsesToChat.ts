import { invalidRequest, unsupportedParameter } from "../upstream/proxyError.ts";

/**
 * Translates a Responses API request into a Chat Completions request for a chat-only upstream.
 * Fields that cannot be carried get a 400 naming them, never silence; fields that only tune
 * caching or what an OpenAI server would include are accepted and have nothing to carry.
 */

type Json = Record<string, unknown>;

/** Accepted with nothing to translate (they only shape what an OpenAI server stores or includes). */
const IGNORED = new Set([
  "include",
  "prompt_cache_key",
  "safety_identifier",
  "truncation",
  "stream_options",
  "store",
  "metadata",
  "previous_response_id",
]);
/** Handled below. */
const HANDLED = new Set([
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "max_output_tokens",
  "temperature",
  "top_p",
  "parallel_tool_calls",
  "reasoning",
  "stream",
  "user",
  "text",
  "service_tier",
]);

export interface ChatMessage extends Json {
  role: string;
}

/** Turns input items (strings, messages, function calls and their outputs) into chat messages. */
function inputToMessages(input: unknown): ChatMessage[] {
  if (typeof input === "string") return [{ role: "user", content: input }];
  if (!Array.isArray(input)) throw invalidRequest("'input' must be a string or an array of items", "input");
  const messages: ChatMessage[] = [];
  input.forEach((raw, index) => {
    if (typeof raw !== "object" || raw === null) throw invalidRequest(`input[${index}] must be an object`, `input[${index}]`);
    const item = raw as Json;
    const type = item.type ?? (item.role !== undefined ? "message" : undefined);
    switch (type) {
      case "message":
        messages.push(messageItem(item, index));
        break;
      case "function_call": {
        const call = {
          id: String(item.call_id ?? ""),
          type: "function",
          function: {
            name: String(item.name ?? ""),
            arguments: typeof item.arguments === "string" ? item.arguments : JSON.stringify(item.arguments ?? {}),
          },
        };
        if (!call.id) throw invalidRequest(`input[${index}] (function_call) needs a call_id`, `input[${index}].call_id`);
        const last = messages[messages.length - 1];
        // Consecutive calls (and text just before them) are one assistant turn in Chat Completions.
        if (last && last.role === "assistant") {
          last.tool_calls ??= [];
          (last.tool_calls as unknown[]).push(call);
        } else messages.push({ role: "assistant", content: null, tool_calls: [call] });
        break;
      }
      case "function_call_output":
        if (typeof item.call_id !== "string" || !item.call_id)
          throw invalidRequest(`input[${index}] (function_call_output) needs a call_id`, `input[${index}].call_id`);
        messages.push({ role: "tool", tool_call_id: item.call_id, content: outputText(item.output) });
        break;
      case "reasoning":
        // Opaque reasoning from an earlier turn; a chat upstream has no slot for it.
        break;
      default:
        throw unsupportedParameter(
          `input[${index}].type`,
          `input items of type '${String(type)}' cannot be sent to a Chat Completions upstream`,
        );
    }
  });
  return messages;
}

function messageItem(item: Json, index: number): ChatMessage {
  const role = item.role === "developer" ? "system" : item.role;
  if (role !== "user" && role !== "assistant" && role !== "system")
    throw invalidRequest(`input[${index}].role must be user, assistant, system or developer`, `input[${index}].role`);
  const content = item.content;
  if (typeof content === "string") return { role, content };
  if (!Array.isArray(content))
    throw invalidRequest(`input[${index}].content must be a string or an array of parts`, `input[${index}].content`);
  const parts = content.map((raw, partIndex) => contentPart(raw as Json, `input[${index}].content[${partIndex}]`));
  // Plain text joins into a string: the widest-supported form, and what assistant turns require.
  if (parts.every((part) => part.type === "text")) return { role, content: parts.map((part) => part.text).join("") };
  if (role !== "user") throw unsupportedParameter(`input[${index}].content`, "only user messages may carry images");
  return { role, content: parts };
}

function contentPart(part: Json, where: string): Json {
  switch (part?.type) {
    case "input_text":
    case "output_text":
    case "text":
      return { type: "text", text: String(part.text ?? "") };
    case "refusal":
      return { type: "text", text: String(part.refusal ?? "") };
    case "input_image":
      if (typeof part.image_url !== "string")
        throw unsupportedParameter(where, "images must be given as image_url (file_id cannot be translated)");
      return { type: "image_url", image_url: { url: part.image_url, ...(part.detail ? { detail: part.detail } : {}) } };
    default:
      throw unsupportedParameter(
        `${where}.type`,
        `content parts of type '${String(part?.type)}' cannot be sent to a Chat Completions upstream`,
      );
  }
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return output.map((part) => (typeof (part as Json)?.text === "string" ? (part as Json).text : "")).join("");
  return JSON.stringify(output ?? "");
}

function toolsToChat(tools: unknown): Json[] {
  if (!Array.isArray(tools)) throw invalidRequest("'tools' must be an array", "tools");
  return tools.map((raw, index) => {
    const tool = raw as Json;
    if (tool?.type !== "function")
      throw unsupportedParameter(
        `tools[${index}]`,
        `tools of type '${String(tool?.type)}' cannot be sent to a Chat Completions upstream; only function tools can`,
      );
    const fn: Json = { name: tool.name };
    if (tool.description !== undefined) fn.description = tool.description;
    if (tool.parameters !== undefined && tool.parameters !== null) fn.parameters = tool.parameters;
    if (tool.strict !== undefined && tool.strict !== null) fn.strict = tool.strict;
    return { type: "function", function: fn };
  });
}

function toolChoiceToChat(choice: unknown): unknown {
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  const object = choice as Json;
  if (object?.type === "function" && typeof object.name === "string") return { type: "function", function: { name: object.name } };
  throw unsupportedParameter("tool_choice", "only auto, none, required or a function tool can be chosen");
}

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
 * previous_response_id), already as Responses input items.
 */
export function responsesToChat(request: Json, history: readonly unknown[] = []): Json {
  for (const key of Object.keys(request)) {
    if (!HANDLED.has(key) && !IGNORED.has(key)) throw unsupportedParameter(key, "not supported when the upstream speaks Chat Completions");
  }
  if (typeof request.model !== "string" || !request.model) throw invalidRequest("'model' is required", "model");
  if (request.input === undefined) throw invalidRequest("'input' is required", "input");
  const input = typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input;
  if (!Array.isArray(input)) throw invalidRequest("'input' must be a string or an array of items", "input");
  const messages = inputToMessages([...history, ...input]);
  if (typeof request.instructions === "string" && request.instructions) messages.unshift({ role: "system", content: request.instructions });
  const chat: Json = { model: request.model, messages };
  const tools = request.tools === undefined || request.tools === null ? [] : toolsToChat(request.tools);
  // Chat upstreams reject tool_choice and parallel_tool_calls without tools.
  if (tools.length > 0) {
    chat.tools = tools;
    if (request.tool_choice !== undefined) chat.tool_choice = toolChoiceToChat(request.tool_choice);
    if (typeof request.parallel_tool_calls === "boolean") chat.parallel_tool_calls = request.parallel_tool_calls;
  }
  if (request.max_output_tokens !== undefined && request.max_output_tokens !== null) chat.max_completion_tokens = request.max_output_tokens;
  for (const key of ["temperature", "top_p", "user", "service_tier"] as const) {
    if (request[key] !== undefined && request[key] !== null) chat[key] = request[key];
  }
  const effort = (request.reasoning as Json | undefined)?.effort;
  if (typeof effort === "string") chat.reasoning_effort = effort;
  const format = textFormatToChat(request.text);
  if (format) chat.response_format = format;
  if (request.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}
