import { invalidRequest, unsupportedParameter } from "../upstream/proxyError.ts";
import { noteDropped } from "./droppedFields.ts";
import { compactionMessage, compactionSummary } from "./compaction.ts";
import { CUSTOM_INPUT, flatName } from "./responsesTools.ts";

/** Responses input items as Chat Completions messages. */

type Json = Record<string, unknown>;

export interface ChatMessage extends Json {
  role: string;
}

/** Items of hosted tools' calls and results: nothing a chat upstream ran, nothing it can read. */
const HOSTED_ITEMS = new Set([
  "web_search_call",
  "file_search_call",
  "image_generation_call",
  "code_interpreter_call",
  "computer_call",
  "computer_call_output",
  "local_shell_call",
  "local_shell_call_output",
  "mcp_call",
  "mcp_list_tools",
  "mcp_approval_request",
  "mcp_approval_response",
]);

/**
 * Turns input items (strings, messages, function and custom tool calls and their outputs) into chat
 * messages; `dropped` collects what has no chat form (reasoning, hosted tools' items).
 */
export function inputToMessages(input: unknown, dropped: string[] = []): ChatMessage[] {
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
      case "function_call":
      case "custom_tool_call":
        pushCall(messages, item, index, String(type));
        break;
      case "function_call_output":
      case "custom_tool_call_output":
        if (typeof item.call_id !== "string" || !item.call_id)
          throw invalidRequest(`input[${index}] (${type}) needs a call_id`, `input[${index}].call_id`);
        messages.push({ role: "tool", tool_call_id: item.call_id, content: outputText(item.output) });
        break;
      case "reasoning":
        // Reasoning from an earlier turn; a chat request has no slot for it.
        noteDropped(dropped, "input.reasoning");
        break;
      case "compaction": {
        // agentd's own compaction is a summary; another server's is encrypted, unreadable here.
        const summary = compactionSummary(item);
        if (summary === undefined) noteDropped(dropped, "input.compaction");
        else messages.push(compactionMessage(summary));
        break;
      }
      case "item_reference":
        throw unsupportedParameter(`input[${index}]`, "an item_reference must be resolved before translation");
      default:
        if (typeof type === "string" && HOSTED_ITEMS.has(type)) {
          noteDropped(dropped, `input.${type}`);
          break;
        }
        throw unsupportedParameter(
          `input[${index}].type`,
          `input items of type '${String(type)}' cannot be sent to a Chat Completions upstream`,
        );
    }
  });
  return messages;
}

function pushCall(messages: ChatMessage[], item: Json, index: number, type: string): void {
  const namespace = typeof item.namespace === "string" ? item.namespace : undefined;
  const args =
    type === "custom_tool_call"
      ? JSON.stringify({ [CUSTOM_INPUT]: typeof item.input === "string" ? item.input : "" })
      : typeof item.arguments === "string"
        ? item.arguments
        : JSON.stringify(item.arguments ?? {});
  const call = {
    id: String(item.call_id ?? ""),
    type: "function",
    function: { name: flatName(namespace, String(item.name ?? "")), arguments: args },
  };
  if (!call.id) throw invalidRequest(`input[${index}] (${type}) needs a call_id`, `input[${index}].call_id`);
  const last = messages[messages.length - 1];
  // Consecutive calls (and text just before them) are one assistant turn in Chat Completions.
  if (last && last.role === "assistant") {
    last.tool_calls ??= [];
    (last.tool_calls as unknown[]).push(call);
  } else messages.push({ role: "assistant", content: null, tool_calls: [call] });
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
