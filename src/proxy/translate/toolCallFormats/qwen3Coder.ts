import { typedArguments } from "./parameterValues.ts";
import type { BlockFormat, ParsedCall, ToolSchemas } from "./types.ts";

const FUNCTION = /^\s*<function=([^>\s]+)>([\s\S]*?)<\/function>\s*/;
const PARAMETER = /^\s*<parameter=([^>\s]+)>([\s\S]*?)<\/parameter>\s*/;

/**
 * Qwen3-Coder: `<tool_call><function=NAME><parameter=KEY>value</parameter>…</function></tool_call>`.
 * Values are raw text (one newline on each side is the template's, not the value's).
 */
export const qwen3Coder: BlockFormat = {
  family: "qwen3_coder",
  open: "<tool_call>",
  close: ["</tool_call>"],
  parse(content, tools) {
    const calls = parseFunctions(content, tools);
    return calls ? { calls } : undefined;
  },
};

/** The same functions written without the `<tool_call>` wrapper, which the model sometimes drops. */
export const qwen3CoderBare: BlockFormat = {
  family: "qwen3_coder",
  open: "<function=",
  close: ["</function>"],
  parse(content, tools) {
    const calls = parseFunctions(`<function=${content}</function>`, tools);
    return calls ? { calls } : undefined;
  },
};

function parseFunctions(content: string, tools: ToolSchemas): ParsedCall[] | undefined {
  const calls: ParsedCall[] = [];
  let rest = content;
  // The closing </function> may be missing when the answer ends inside the call.
  if (!/<\/function>\s*$/.test(rest) && /^\s*<function=/.test(rest)) rest = `${rest.trimEnd()}</function>`;
  while (rest.trim() !== "") {
    const fn = FUNCTION.exec(rest);
    if (!fn) return undefined;
    const pairs = parameters(fn[2]!);
    if (!pairs) return undefined;
    calls.push({ name: fn[1]!, arguments: typedArguments(fn[1]!, pairs, tools) });
    rest = rest.slice(fn[0].length);
  }
  return calls.length > 0 ? calls : undefined;
}

function parameters(body: string): [string, string][] | undefined {
  const pairs: [string, string][] = [];
  let rest = body;
  while (rest.trim() !== "") {
    const param = PARAMETER.exec(rest);
    if (!param) return undefined;
    pairs.push([param[1]!, param[2]!.replace(/^\n/, "").replace(/\n$/, "")]);
    rest = rest.slice(param[0].length);
  }
  return pairs;
}
