import { argumentsText, readJsonValue } from "./jsonText.ts";
import type { BlockFormat, ParsedCall } from "./types.ts";

const CALL_BEGIN = "<|tool_call_begin|>";
const ARG_BEGIN = "<|tool_call_argument_begin|>";
const CALL_END = "<|tool_call_end|>";
/** `functions.NAME:0`, or `NAME:0`; the counter is the call's index in the turn. */
const CALL_ID = /^\s*(?:functions\.)?([A-Za-z0-9_.-]{1,128}):\d+\s*$/;

/**
 * Kimi K2: `<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0 <|tool_call_argument_begin|>{…}<|tool_call_end|>…<|tool_calls_section_end|>`.
 */
export const kimiK2: BlockFormat = {
  family: "kimi_k2",
  open: "<|tool_calls_section_begin|>",
  close: ["<|tool_calls_section_end|>"],
  parse(content) {
    const calls: ParsedCall[] = [];
    let rest = content.trim();
    while (rest !== "") {
      if (!rest.startsWith(CALL_BEGIN)) return undefined;
      rest = rest.slice(CALL_BEGIN.length);
      const end = rest.indexOf(CALL_END);
      const one = end === -1 ? rest : rest.slice(0, end);
      rest = end === -1 ? "" : rest.slice(end + CALL_END.length).trim();
      const arg = one.indexOf(ARG_BEGIN);
      const id = arg === -1 ? null : CALL_ID.exec(one.slice(0, arg));
      if (!id) return undefined;
      const body = one.slice(arg + ARG_BEGIN.length);
      const read = readJsonValue(body);
      const call = read && body.slice(read.end).trim() === "" ? argumentsText(id[1]!, read.value) : undefined;
      if (!call) return undefined;
      calls.push(call);
    }
    return calls.length > 0 ? { calls } : undefined;
  },
};
