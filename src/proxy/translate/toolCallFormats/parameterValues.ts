import type { ToolSchemas } from "./types.ts";

/**
 * Formats that write each parameter as text (Qwen3-Coder, GLM-4.5, MiniMax M2) leave its type to
 * the schema: a parameter declared as a string keeps the text as written; any other declared
 * type is read as JSON when it parses (numbers, booleans, objects), else kept as text.
 */
export function typedArguments(name: string, pairs: ReadonlyArray<readonly [string, string]>, tools: ToolSchemas): string {
  const properties = (tools.get(name)?.properties ?? {}) as Record<string, { type?: unknown } | undefined>;
  const args: Record<string, unknown> = {};
  for (const [key, raw] of pairs) args[key] = typedValue(raw, properties[key]?.type);
  return JSON.stringify(args);
}

function typedValue(raw: string, type: unknown): unknown {
  const types = Array.isArray(type) ? type : [type];
  if (type === undefined || types.includes("string")) return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    // Python spellings some models use for JSON literals.
    if (raw === "True" || raw === "False") return raw === "True";
    if (raw === "None") return null;
    return raw;
  }
}
