import { invalidRequest } from "../upstream/proxyError.ts";

/**
 * Function tool names must be non-empty and made of letters, digits, '_' and '-': OpenAI enforces
 * this and many compatible providers fail on anything else in ways that look like their own
 * outage. It is the client's mistake, so the client hears about it, naming the tool.
 */
const TOOL_NAME = /^[A-Za-z0-9_-]+$/;

function check(name: unknown, param: string, index: number): void {
  if (typeof name !== "string" || name === "")
    throw invalidRequest(
      `tools[${index}] has an empty function name; every function tool needs a name of letters, digits, '_' or '-'`,
      param,
    );
  if (!TOOL_NAME.test(name))
    throw invalidRequest(
      `tools[${index}] has the function name ${JSON.stringify(name)}, which may only contain letters, digits, '_' and '-'`,
      param,
    );
}

/** Chat Completions tools: `{type: "function", function: {name}}`. */
export function assertChatToolNames(tools: unknown): void {
  if (!Array.isArray(tools)) return;
  tools.forEach((tool: { type?: unknown; function?: { name?: unknown } } | null, index) => {
    if (tool?.type === "function") check(tool.function?.name, `tools[${index}].function.name`, index);
  });
}

/** Responses tools: `{type: "function", name}`; built-in tools have no name to check. */
export function assertResponsesToolNames(tools: unknown): void {
  if (!Array.isArray(tools)) return;
  tools.forEach((tool: { type?: unknown; name?: unknown } | null, index) => {
    if (tool?.type === "function") check(tool.name, `tools[${index}].name`, index);
  });
}
