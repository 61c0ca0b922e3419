import { invalidRequest, unsupportedParameter } from "../upstream/proxyError.ts";
import { noteDropped } from "./droppedFields.ts";

/**
 * Responses tools as Chat Completions function tools. Namespaces are flattened into functions with
 * reversible names, custom (freeform) tools become a function with one string parameter, hosted
 * tools are dropped and reported. The name map turns the chat upstream's calls back into what the
 * client declared.
 */

type Json = Record<string, unknown>;

/** What a chat function name stands for on the Responses side. */
export interface ToolTarget {
  name: string;
  namespace?: string;
  custom: boolean;
}

export type ToolNames = ReadonlyMap<string, ToolTarget>;

/** Tools the Responses server runs itself: a chat upstream has nothing to run them with. */
const HOSTED = new Set([
  "web_search",
  "web_search_preview",
  "web_search_2025_08_26",
  "web_search_preview_2025_03_11",
  "file_search",
  "local_shell",
  "image_generation",
  "code_interpreter",
  "computer_use_preview",
  "mcp",
]);

const MAX_NAME = 64;

export function isHostedTool(type: unknown): boolean {
  return typeof type === "string" && HOSTED.has(type);
}

/** The chat function name of a namespaced tool: `ns__name`, shortened with a hash past 64 characters. */
export function flatName(namespace: string | undefined, name: string): string {
  if (!namespace) return name;
  const joined = `${namespace}__${name}`;
  if (joined.length <= MAX_NAME) return joined;
  return `${joined.slice(0, MAX_NAME - 9)}_${Bun.hash(joined).toString(36).slice(0, 8).padStart(8, "0")}`;
}

/** The argument a custom tool's single string parameter is called in chat. */
export const CUSTOM_INPUT = "input";

interface Leaf {
  tool: Json;
  namespace?: string;
  /** Where it was in the request, for error params. */
  at: string;
}

function leaves(tools: unknown[], dropped: string[]): Leaf[] {
  const out: Leaf[] = [];
  tools.forEach((raw, index) => {
    const tool = raw as Json;
    const at = `tools[${index}]`;
    if (tool?.type === "function" || tool?.type === "custom") out.push({ tool, at });
    else if (tool?.type === "namespace") {
      if (typeof tool.name !== "string" || !tool.name || !Array.isArray(tool.tools))
        throw invalidRequest(`${at} (namespace) needs a name and a tools array`, at);
      (tool.tools as Json[]).forEach((inner, innerIndex) => {
        if (inner?.type !== "function" && inner?.type !== "custom")
          throw unsupportedParameter(`${at}.tools[${innerIndex}]`, "a namespace may only hold function and custom tools");
        out.push({ tool: inner, namespace: tool.name as string, at: `${at}.tools[${innerIndex}]` });
      });
    } else if (isHostedTool(tool?.type)) noteDropped(dropped, `tools.${String(tool.type)}`);
    else throw unsupportedParameter(at, `tools of type '${String(tool?.type)}' cannot be sent to a Chat Completions upstream`);
  });
  return out;
}

/** The chat name → Responses tool map of a request's tools (hosted ones have no chat name). */
export function toolNamesOf(tools: unknown): ToolNames {
  const names = new Map<string, ToolTarget>();
  if (!Array.isArray(tools)) return names;
  for (const raw of tools as Json[]) {
    const group = raw?.type === "namespace" && Array.isArray(raw.tools) ? (raw.tools as Json[]) : [raw];
    const namespace = raw?.type === "namespace" ? String(raw.name) : undefined;
    for (const tool of group) {
      if ((tool?.type !== "function" && tool?.type !== "custom") || typeof tool.name !== "string") continue;
      names.set(flatName(namespace, tool.name), { name: tool.name, namespace, custom: tool.type === "custom" });
    }
  }
  return names;
}

function customDescription(tool: Json, namespaceDescription?: unknown): string {
  const parts: string[] = [];
  if (typeof namespaceDescription === "string" && namespaceDescription) parts.push(namespaceDescription);
  if (typeof tool.description === "string" && tool.description) parts.push(tool.description);
  return parts.join("\n\n");
}

function chatTool(leaf: Leaf, namespaceDescriptions: Map<string, unknown>): Json {
  const { tool, namespace } = leaf;
  const fn: Json = { name: flatName(namespace, String(tool.name)) };
  const description = customDescription(tool, namespace ? namespaceDescriptions.get(namespace) : undefined);
  if (description) fn.description = description;
  if (tool.type === "custom") {
    const format = tool.format as Json | undefined;
    const grammar =
      format?.type === "grammar" ? `The input must follow this ${String(format.syntax)} grammar:\n${String(format.definition)}` : "";
    fn.parameters = {
      type: "object",
      properties: { [CUSTOM_INPUT]: { type: "string", description: grammar || "The tool's input, as free text." } },
      required: [CUSTOM_INPUT],
      additionalProperties: false,
    };
    return { type: "function", function: fn };
  }
  if (tool.parameters !== undefined && tool.parameters !== null) fn.parameters = tool.parameters;
  if (tool.strict !== undefined && tool.strict !== null) fn.strict = tool.strict;
  return { type: "function", function: fn };
}

function matches(entry: Json, leaf: Leaf): boolean {
  if (entry?.type === "namespace") return leaf.namespace === entry.name;
  if (entry?.type !== leaf.tool.type || entry.name !== leaf.tool.name) return false;
  return entry.namespace === undefined || entry.namespace === leaf.namespace;
}

/**
 * The chat `tools` and `tool_choice` for a Responses request's; `dropped` collects hosted tools.
 * A tool_choice that forces a hosted tool (or demands a call when only hosted tools were given) is
 * refused: dropping it would change what the client gets back.
 */
export function toolsToChat(tools: unknown, choice: unknown, dropped: string[]): { tools: Json[]; choice?: unknown } {
  if (tools === undefined || tools === null) tools = [];
  if (!Array.isArray(tools)) throw invalidRequest("'tools' must be an array", "tools");
  const hostedCount = dropped.length;
  let all = leaves(tools, dropped);
  const onlyHosted = all.length === 0 && dropped.length > hostedCount;
  let mapped: unknown;
  if (choice === undefined || choice === null || choice === "auto" || choice === "none") mapped = choice ?? undefined;
  else if (choice === "required") mapped = "required";
  else {
    const object = choice as Json;
    if (object?.type === "allowed_tools") {
      const allowed = Array.isArray(object.tools) ? (object.tools as Json[]) : [];
      if (allowed.some((entry) => isHostedTool(entry?.type)) && !allowed.some((entry) => !isHostedTool(entry?.type)))
        throw unsupportedParameter("tool_choice", "it allows only hosted tools, which a Chat Completions upstream cannot run");
      all = all.filter((leaf) => allowed.some((entry) => matches(entry, leaf)));
      mapped = object.mode === "required" ? "required" : "auto";
    } else if ((object?.type === "function" || object?.type === "custom") && typeof object.name === "string") {
      const namespace = typeof object.namespace === "string" ? object.namespace : undefined;
      mapped = { type: "function", function: { name: flatName(namespace, object.name) } };
    } else if (isHostedTool(object?.type))
      throw unsupportedParameter(
        "tool_choice",
        `it forces the hosted tool '${String(object.type)}', which a Chat Completions upstream cannot run`,
      );
    else throw unsupportedParameter("tool_choice", "only auto, none, required, allowed_tools or a function or custom tool can be chosen");
  }
  if (mapped === "required" && all.length === 0 && onlyHosted)
    throw unsupportedParameter(
      "tool_choice",
      "it requires a tool call but only hosted tools were given, which a Chat Completions upstream cannot run",
    );
  const descriptions = new Map<string, unknown>();
  for (const raw of tools as Json[]) if (raw?.type === "namespace") descriptions.set(String(raw.name), raw.description);
  return { tools: all.map((leaf) => chatTool(leaf, descriptions)), choice: mapped };
}

/** The input of a custom tool call from the chat arguments the model wrote (raw text when they are not the expected JSON). */
export function customInput(args: string): string {
  try {
    const parsed = JSON.parse(args) as Json;
    if (typeof parsed?.[CUSTOM_INPUT] === "string") return parsed[CUSTOM_INPUT] as string;
  } catch {
    // The model wrote the input itself rather than JSON.
  }
  return args;
}

/** A chat tool call as the Responses output item the client declared: function_call or custom_tool_call. */
export function callItem(
  names: ToolNames,
  callId: string,
  chatName: string,
  args: string,
  status: "in_progress" | "completed" | "incomplete" = "completed",
): Json {
  const target = names.get(chatName);
  const namespace = target?.namespace ? { namespace: target.namespace } : {};
  if (target?.custom) {
    return {
      type: "custom_tool_call",
      id: `ctc_${callId}`,
      call_id: callId,
      name: target.name,
      ...namespace,
      input: status === "in_progress" ? "" : customInput(args),
      status,
    };
  }
  return {
    type: "function_call",
    id: `fc_${callId}`,
    call_id: callId,
    name: target?.name ?? chatName,
    ...namespace,
    arguments: args,
    status,
  };
}
