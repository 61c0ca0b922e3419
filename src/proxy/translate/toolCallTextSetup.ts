import type { ProviderConfig } from "../../core/config/sections/providerConfig.ts";
import { compileGlob } from "../upstream/modelMatcher.ts";
import { formatSet, type FormatSet, type ToolSchemas } from "./toolCallFormats/index.ts";
import type { RepairKind } from "./toolCallRepair.ts";
import type { UnparsedSink } from "./toolCallText.ts";

/** What reading tool calls in text needs for one request: the formats to look for and the declared tools. */
export interface ToolCallTextPlan {
  formats: FormatSet;
  tools: ToolSchemas;
  report: ToolCallReport;
}

/** The first unparseable block an answer kept only this long: enough to see the format, bounded for logs. */
const SAMPLE_CHARS = 300;

/** What was found and repaired in one answer, for the `x-agentd-repaired` header and the metrics. */
export class ToolCallReport implements UnparsedSink {
  readonly families: string[] = [];
  readonly repairs: RepairKind[] = [];
  /** The family of each block at a format's own marker that did not become calls: the model tried, the client got text. */
  readonly unparsed: string[] = [];
  /** The opening text of the first of them. */
  unparsedSample: string | undefined;

  unparsedBlock(family: string, block: string): void {
    this.unparsed.push(family);
    this.unparsedSample ??= block.slice(0, SAMPLE_CHARS);
  }

  /** Each repair kind once, in the order first seen. */
  repairKinds(): RepairKind[] {
    return [...new Set(this.repairs)];
  }
}

/**
 * The plan for a request, or undefined when text is not to be read: the provider turned it off,
 * or the request declared no tools (a call is only ever made for a declared tool).
 */
export function toolCallTextPlan(provider: ProviderConfig, model: string, declared: unknown): ToolCallTextPlan | undefined {
  if (provider.tool_call_text === "off") return undefined;
  const tools = declaredTools(declared);
  if (tools.size === 0) return undefined;
  return { formats: formatSet(familyFor(provider.tool_call_format, model)), tools, report: new ToolCallReport() };
}

function familyFor(setting: ProviderConfig["tool_call_format"], model: string): string {
  if (setting === undefined || typeof setting === "string") return setting ?? "auto";
  if (Object.hasOwn(setting, model)) return setting[model]!;
  const glob = Object.entries(setting).find(([pattern]) => compileGlob(pattern)(model));
  return glob?.[1] ?? "auto";
}

/**
 * Declared function tools by name with their argument schemas, from any client's shape: Chat
 * (`{type: "function", function: {name, parameters}}`), Responses (`{type: "function", name,
 * parameters}`) or Anthropic (`{name, input_schema}`).
 */
export function declaredTools(tools: unknown): ToolSchemas {
  const out = new Map<string, Record<string, unknown>>();
  if (!Array.isArray(tools)) return out;
  for (const tool of tools as Record<string, unknown>[]) {
    if (typeof tool !== "object" || tool === null) continue;
    const fn = (tool.type === "function" && typeof tool.function === "object" && tool.function !== null ? tool.function : tool) as Record<
      string,
      unknown
    >;
    if (typeof fn.name !== "string") continue;
    const schema = fn.parameters ?? fn.input_schema;
    out.set(fn.name, typeof schema === "object" && schema !== null ? (schema as Record<string, unknown>) : {});
  }
  return out;
}
