import { invalidRequest } from "../upstream/proxyError.ts";
import { openAiIdentifiers } from "./anthropicUserId.ts";
import { noteDropped } from "./droppedFields.ts";

type Json = Record<string, unknown>;

/** Fields with no chat form that change nothing the client relies on: dropped and reported. */
const DROPPED = new Set(["context_management", "top_k", "service_tier", "container", "mcp_servers", "betas"]);
const HANDLED = new Set([
  "model",
  "messages",
  "system",
  "max_tokens",
  "stream",
  "tools",
  "tool_choice",
  "stop_sequences",
  "temperature",
  "top_p",
  "thinking",
  "metadata",
]);

/**
 * Translates an Anthropic Messages request into a Chat Completions request: system blocks become
 * the system message, tool_result blocks tool messages (placed before the user's other content,
 * as chat wants them right after the assistant's calls), tool_use blocks tool_calls, `thinking`
 * a reasoning effort. Thinking blocks sent back are left out: a chat upstream takes no reasoning
 * as input. cache_control markers and context_management have no chat form: dropped and reported.
 */
export function anthropicToChat(request: Json, dropped: string[] = []): Json {
  for (const [key, value] of Object.entries(request)) {
    if (HANDLED.has(key) || value === null || value === undefined) continue;
    if (DROPPED.has(key)) noteDropped(dropped, key);
    else noteDropped(dropped, "unknown_field");
  }
  if (typeof request.model !== "string" || !request.model) throw invalidRequest("'model' is required", "model");
  if (!Array.isArray(request.messages)) throw invalidRequest("'messages' must be an array", "messages");
  const messages: Json[] = [];
  const system = systemText(request.system, dropped);
  if (system) messages.push({ role: "system", content: system });
  for (const message of request.messages as Json[]) messages.push(...messageToChat(message, dropped));
  const chat: Json = { model: request.model, messages };
  if (typeof request.max_tokens === "number") chat.max_completion_tokens = request.max_tokens;
  if (typeof request.temperature === "number") chat.temperature = request.temperature;
  if (typeof request.top_p === "number") chat.top_p = request.top_p;
  if (Array.isArray(request.stop_sequences) && request.stop_sequences.length > 0) chat.stop = request.stop_sequences;
  const userId = (request.metadata as Json | undefined)?.user_id;
  if (typeof userId === "string" && userId) {
    const ids = openAiIdentifiers(userId);
    chat.user = ids.user;
    if (ids.promptCacheKey) chat.prompt_cache_key = ids.promptCacheKey;
    if (ids.reshaped) noteDropped(dropped, "metadata.user_id");
  }
  const effort = reasoningEffort(request.thinking);
  if (effort) chat.reasoning_effort = effort;
  toolsToChat(request, chat, dropped);
  if (request.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

/** Thinking budgets as OpenAI's reasoning efforts: the budget a client allows says how hard to think. */
export function reasoningEffort(thinking: unknown): string | undefined {
  const t = thinking as { type?: unknown; budget_tokens?: unknown } | undefined;
  if (!t || (t.type !== "enabled" && t.type !== "adaptive")) return undefined;
  const budget = typeof t.budget_tokens === "number" ? t.budget_tokens : 8192;
  if (budget < 4096) return "low";
  if (budget < 16_384) return "medium";
  return "high";
}

function systemText(system: unknown, dropped: string[]): string {
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) return "";
  return (system as Json[])
    .map((block) => {
      if (block.cache_control) noteDropped(dropped, "cache_control");
      return typeof block.text === "string" ? block.text : "";
    })
    .filter((text) => text !== "")
    .join("\n\n");
}

function blocksOf(content: unknown): Json[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw invalidRequest("'content' must be a string or an array of blocks", "messages");
  return content as Json[];
}

function messageToChat(message: Json, dropped: string[]): Json[] {
  const role = message.role;
  const blocks = blocksOf(message.content);
  // Claude Code puts some instructions in mid-conversation system turns.
  if (role === "system") return [{ role: "system", content: blocks.map((block) => String(block.text ?? "")).join("\n\n") }];
  if (role !== "user" && role !== "assistant") throw invalidRequest(`unknown message role '${String(role)}'`, "messages");
  for (const block of blocks) if (block.cache_control) noteDropped(dropped, "cache_control");
  return role === "assistant" ? [assistantToChat(blocks)] : userToChat(blocks, dropped);
}

function assistantToChat(blocks: Json[]): Json {
  let text = "";
  const calls: Json[] = [];
  for (const block of blocks) {
    if (block.type === "text" && typeof block.text === "string") text += block.text;
    else if (block.type === "tool_use")
      calls.push({
        id: String(block.id ?? ""),
        type: "function",
        function: { name: String(block.name ?? ""), arguments: JSON.stringify(block.input ?? {}) },
      });
  }
  const out: Json = { role: "assistant", content: text || null };
  if (calls.length > 0) out.tool_calls = calls;
  return out;
}

function userToChat(blocks: Json[], dropped: string[]): Json[] {
  const results: Json[] = [];
  const parts: Json[] = [];
  for (const block of blocks) {
    if (block.type === "tool_result") {
      const { text, images } = toolResultContent(block);
      results.push({
        role: "tool",
        tool_call_id: String(block.tool_use_id ?? ""),
        content: block.is_error === true ? `Error: ${text}` : text,
      });
      parts.push(...images);
    } else if (block.type === "text" && typeof block.text === "string") parts.push({ type: "text", text: block.text });
    else if (block.type === "image") parts.push(imagePart(block));
    else noteDropped(dropped, `content.${String(block.type)}`);
  }
  if (parts.length === 0) return results;
  const onlyText = parts.every((part) => part.type === "text");
  const content = onlyText ? parts.map((part) => part.text).join("\n") : parts;
  return [...results, { role: "user", content }];
}

/** A tool result's text; its images go into the user message that follows (chat tool messages take text). */
function toolResultContent(block: Json): { text: string; images: Json[] } {
  const content = block.content;
  if (typeof content === "string") return { text: content, images: [] };
  if (!Array.isArray(content)) return { text: "", images: [] };
  const texts: string[] = [];
  const images: Json[] = [];
  for (const part of content as Json[]) {
    if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
    else if (part.type === "image") images.push(imagePart(part));
  }
  return { text: texts.join("\n"), images };
}

function imagePart(block: Json): Json {
  const source = (block.source ?? {}) as Json;
  if (source.type === "base64")
    return { type: "image_url", image_url: { url: `data:${String(source.media_type)};base64,${String(source.data)}` } };
  if (source.type === "url") return { type: "image_url", image_url: { url: String(source.url) } };
  throw invalidRequest(`image source '${String(source.type)}' cannot be translated`, "messages");
}

function toolsToChat(request: Json, chat: Json, dropped: string[]): void {
  const tools: Json[] = [];
  for (const tool of (request.tools as Json[] | undefined) ?? []) {
    if (tool.cache_control) noteDropped(dropped, "cache_control");
    // Anthropic's server tools (web_search_…, bash_…) run at Anthropic: no chat equivalent.
    if (tool.type !== undefined && tool.type !== "custom") {
      noteDropped(dropped, "tools.server_tool");
      continue;
    }
    const fn: Json = { name: tool.name, parameters: tool.input_schema ?? { type: "object", properties: {} } };
    if (typeof tool.description === "string") fn.description = tool.description;
    tools.push({ type: "function", function: fn });
  }
  // Chat upstreams reject tool_choice without tools.
  if (tools.length === 0) return;
  chat.tools = tools;
  const choice = request.tool_choice as { type?: unknown; name?: unknown; disable_parallel_tool_use?: unknown } | undefined;
  if (!choice) return;
  if (choice.type === "auto") chat.tool_choice = "auto";
  else if (choice.type === "any") chat.tool_choice = "required";
  else if (choice.type === "none") chat.tool_choice = "none";
  else if (choice.type === "tool") chat.tool_choice = { type: "function", function: { name: String(choice.name ?? "") } };
  if (choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
}
