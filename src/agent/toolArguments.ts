import type { ChatMessage } from "./sessionStore.ts";
import type { ToolDefinition } from "../core/tools/toolDefinition.ts";

export type ParsedArguments = { ok: true; args: unknown; raw: unknown } | { ok: false; raw: unknown; error: ToolErrorBody };

export interface ToolErrorBody {
  code: string;
  message: string;
  [field: string]: unknown;
}

/**
 * Reads the model's argument text and checks it against the tool's schema. A failure is an
 * answer for the model (so it can correct itself), never an exception.
 */
export function parseToolArguments(tool: ToolDefinition, text: string): ParsedArguments {
  let raw: unknown;
  try {
    raw = text.trim() === "" ? {} : JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      raw: text,
      error: { code: "invalid_arguments", message: `Arguments for ${tool.name} are not valid JSON: ${(error as Error).message}` },
    };
  }
  const result = tool.parameters.safeParse(raw);
  if (result.success) return { ok: true, args: result.data, raw };
  const issues = result.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message }));
  const summary = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
  return { ok: false, raw, error: { code: "invalid_arguments", message: `Invalid arguments for ${tool.name}: ${summary}`, issues } };
}

/** The model's argument text as a value to store: the parsed JSON, or the text when it is not JSON. */
export function argumentValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The argument text of each call of the newest model message that made calls, by call id. */
export function argumentsByCallId(history: ChatMessage[]): Map<string, string> {
  for (let i = history.length - 1; i >= 0; i--) {
    const calls = history[i]!.tool_calls as Array<{ id: string; function: { arguments: string } }> | undefined;
    if (calls) return new Map(calls.map((call) => [call.id, call.function.arguments]));
  }
  return new Map();
}
