import { typedArguments } from "./parameterValues.ts";
import type { BlockFormat, ParsedCall } from "./types.ts";

const INVOKE = /^\s*<invoke name="([^"]{1,128})">([\s\S]*?)<\/invoke>\s*/;
const PARAMETER = /^\s*<parameter name="([^"]{1,128})">([\s\S]*?)<\/parameter>\s*/;

/**
 * MiniMax M2: `<minimax:tool_call><invoke name="NAME"><parameter name="KEY">value</parameter>…</invoke>…</minimax:tool_call>`.
 */
export const minimaxM2: BlockFormat = {
  family: "minimax_m2",
  open: "<minimax:tool_call>",
  close: ["</minimax:tool_call>"],
  parse(content, tools) {
    const calls: ParsedCall[] = [];
    let rest = content;
    while (rest.trim() !== "") {
      const invoke = INVOKE.exec(rest);
      if (!invoke) return undefined;
      const pairs: [string, string][] = [];
      let body = invoke[2]!;
      while (body.trim() !== "") {
        const param = PARAMETER.exec(body);
        if (!param) return undefined;
        pairs.push([param[1]!, param[2]!.replace(/^\n/, "").replace(/\n$/, "")]);
        body = body.slice(param[0].length);
      }
      calls.push({ name: invoke[1]!, arguments: typedArguments(invoke[1]!, pairs, tools) });
      rest = rest.slice(invoke[0].length);
    }
    return calls.length > 0 ? { calls } : undefined;
  },
};
