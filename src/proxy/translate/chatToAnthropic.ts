import { invalidRequest } from "../upstream/proxyError.ts";
import { noteDropped } from "./droppedFields.ts";

type Json = Record<string, unknown>;

const HANDLED = new Set([
  "model",
  "messages",
  "max_tokens",
  "max_completion_tokens",
  "stream",
  "stream_options",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "stop",
  "temperature",
  "top_p",
  "reasoning_effort",
  "user",
]);

/** Anthropic requires max_tokens; a chat client may leave it out. */
const DEFAULT_MAX_TOKENS = 8192;
const BUDGETS: Record<string, number> = { minimal: 1024, low: 2048, medium: 8192, high: 24_576 };

/**
 * Translates a Chat Completions request into an Anthropic Messages request, for a model only an
 * Anthropic-wire upstream serves: system messages become `system`, tool messages tool_result
 * blocks in a user turn, tool_calls tool_use blocks, consecutive turns of one role merge (the
 * Messages API wants them alternating), reasoning_effort a thinking budget. Fields without a
 * Messages form (seed, penalties, logprobs, n, response_format…) are dropped and reported.
 */
export function chatToAnthropic(chat: Json, dropped: string[] = []): Json {
  for (const [key, value] of Object.entries(chat)) {
    if (!HANDLED.has(key) && value !== null && value !== undefined) noteDropped(dropped, key);
  }
  if (!Array.isArray(chat.messages)) throw invalidRequest("'messages' must be an array", "messages");
  const system: string[] = [];
  const messages: Json[] = [];
  const append = (role: string, blocks: Json[]) => {
    const last = messages.at(-1);
    if (last && last.role === role) (last.content as Json[]).push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const message of chat.messages as Json[]) {
    const role = message.role;
    if (role === "system" || role === "developer") system.push(textOf(message.content));
    else if (role === "user") append("user", userBlocks(message.content));
    else if (role === "assistant") append("assistant", assistantBlocks(message));
    else if (role === "tool")
      append("user", [{ type: "tool_result", tool_use_id: String(message.tool_call_id ?? ""), content: textOf(message.content) }]);
    else throw invalidRequest(`unknown message role '${String(role)}'`, "messages");
  }
  const maxTokens = Number(chat.max_completion_tokens ?? chat.max_tokens ?? DEFAULT_MAX_TOKENS);
  const request: Json = { model: chat.model, max_tokens: maxTokens, messages };
  if (system.length > 0) request.system = system.join("\n\n");
  if (typeof chat.temperature === "number") request.temperature = Math.min(chat.temperature, 1);
  if (typeof chat.top_p === "number") request.top_p = chat.top_p;
  if (chat.stop !== undefined && chat.stop !== null) request.stop_sequences = Array.isArray(chat.stop) ? chat.stop : [chat.stop];
  if (typeof chat.user === "string") request.metadata = { user_id: chat.user };
  const budget = typeof chat.reasoning_effort === "string" ? BUDGETS[chat.reasoning_effort] : undefined;
  if (budget !== undefined) {
    request.thinking = { type: "enabled", budget_tokens: budget };
    // The budget must stay below max_tokens.
    if (maxTokens <= budget) request.max_tokens = budget + maxTokens;
  }
  toolsToAnthropic(chat, request);
  if (chat.stream === true) request.stream = true;
  return request;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Json[]).map((part) => (typeof part.text === "string" ? part.text : "")).join("");
}

function userBlocks(content: unknown): Json[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  const blocks: Json[] = [];
  for (const part of content as Json[]) {
    if (part.type === "text") blocks.push({ type: "text", text: String(part.text ?? "") });
    else if (part.type === "image_url") blocks.push(imageBlock(String((part.image_url as Json | undefined)?.url ?? "")));
    else throw invalidRequest(`content part '${String(part.type)}' cannot be sent to an Anthropic upstream`, "messages");
  }
  return blocks;
}

function imageBlock(url: string): Json {
  const data = /^data:([^;]+);base64,(.*)$/s.exec(url);
  if (data) return { type: "image", source: { type: "base64", media_type: data[1], data: data[2] } };
  return { type: "image", source: { type: "url", url } };
}

function assistantBlocks(message: Json): Json[] {
  const blocks: Json[] = [];
  const text = textOf(message.content);
  if (text) blocks.push({ type: "text", text });
  for (const call of (message.tool_calls as Json[] | undefined) ?? []) {
    const fn = (call.function ?? {}) as Json;
    let input: unknown = {};
    try {
      input = JSON.parse(String(fn.arguments || "{}"));
    } catch {
      throw invalidRequest(`tool call ${String(call.id)} has arguments that are not JSON`, "messages");
    }
    blocks.push({ type: "tool_use", id: String(call.id ?? ""), name: String(fn.name ?? ""), input });
  }
  return blocks;
}

function toolsToAnthropic(chat: Json, request: Json): void {
  const tools: Json[] = [];
  for (const tool of (chat.tools as Json[] | undefined) ?? []) {
    const fn = (tool.function ?? {}) as Json;
    if (tool.type !== "function") throw invalidRequest(`tool type '${String(tool.type)}' cannot be sent to an Anthropic upstream`, "tools");
    const out: Json = { name: fn.name, input_schema: fn.parameters ?? { type: "object", properties: {} } };
    if (typeof fn.description === "string") out.description = fn.description;
    tools.push(out);
  }
  if (tools.length === 0) return;
  request.tools = tools;
  const choice = chat.tool_choice as string | { function?: { name?: unknown } } | undefined;
  let toolChoice: Json | undefined;
  if (choice === "auto") toolChoice = { type: "auto" };
  else if (choice === "required") toolChoice = { type: "any" };
  else if (choice === "none") toolChoice = { type: "none" };
  else if (typeof choice === "object" && choice?.function) toolChoice = { type: "tool", name: String(choice.function.name ?? "") };
  if (chat.parallel_tool_calls === false) toolChoice = { ...(toolChoice ?? { type: "auto" }), disable_parallel_tool_use: true };
  if (toolChoice) request.tool_choice = toolChoice;
}
