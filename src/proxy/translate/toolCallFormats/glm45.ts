import { typedArguments } from "./parameterValues.ts";
import type { BlockFormat } from "./types.ts";

const HEAD = /^\s*([A-Za-z0-9_.:-]{1,128})\s*/;
const PAIR = /^<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>([\s\S]*?)<\/arg_value>\s*/;

/**
 * GLM-4.5 / 4.6 / 4.7: `<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…</tool_call>`,
 * with or without newlines between the parts.
 */
export const glm45: BlockFormat = {
  family: "glm45",
  open: "<tool_call>",
  close: ["</tool_call>"],
  parse(content, tools) {
    const head = HEAD.exec(content);
    if (!head) return undefined;
    const pairs: [string, string][] = [];
    let rest = content.slice(head[0].length);
    while (rest !== "") {
      const pair = PAIR.exec(rest);
      if (!pair) return undefined;
      pairs.push([pair[1]!.trim(), pair[2]!]);
      rest = rest.slice(pair[0].length);
    }
    return { calls: [{ name: head[1]!, arguments: typedArguments(head[1]!, pairs, tools) }] };
  },
};
