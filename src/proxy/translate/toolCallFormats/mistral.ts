import { argumentsText, callsFromJson, readJsonValue } from "./jsonText.ts";
import type { BlockFormat, BlockParse, ParsedCall } from "./types.ts";

const MARKER = "[TOOL_CALLS]";
const NAMED = /^([A-Za-z0-9_.:-]{1,128})(?:\[CALL_ID\][A-Za-z0-9]+)?(?:\[ARGS\])?/;

/**
 * Mistral, both tokenizer generations, from `[TOOL_CALLS]` to the end of the answer:
 * before v11 a JSON list (`[TOOL_CALLS] [{"name": …, "arguments": {…}}]`); from v11 one call per
 * marker, `[TOOL_CALLS]NAME[ARGS]{…}` (`[ARGS]` and `[CALL_ID]…` are absent when the server
 * strips special tokens). Text after the JSON is released as text.
 */
export const mistral: BlockFormat = {
  family: "mistral",
  open: MARKER,
  close: [],
  parse(content) {
    return content.trimStart().startsWith("[") || content.trimStart().startsWith("{") ? listForm(content) : namedForm(content);
  },
};

function listForm(content: string): BlockParse | undefined {
  const read = readJsonValue(content);
  const calls = read && callsFromJson(read.value);
  if (!read || !calls) return undefined;
  return { calls, after: content.slice(read.end) };
}

function namedForm(content: string): BlockParse | undefined {
  const calls: ParsedCall[] = [];
  let rest = content;
  for (;;) {
    const named = NAMED.exec(rest.trimStart());
    if (!named) return undefined;
    rest = rest.trimStart().slice(named[0].length);
    const read = readJsonValue(rest);
    const call = read && argumentsText(named[1]!, read.value);
    if (!read || !call) return undefined;
    calls.push(call);
    rest = rest.slice(read.end);
    const next = rest.indexOf(MARKER);
    if (next === -1 || rest.slice(0, next).trim() !== "") return { calls, after: rest };
    rest = rest.slice(next + MARKER.length);
  }
}
