import { argumentsText, readJsonValue } from "./jsonText.ts";
import type { BlockFormat, BlockParse, ParsedCall } from "./types.ts";

const CALLS_BEGIN = "<｜tool▁calls▁begin｜>";
const CALLS_END = "<｜tool▁calls▁end｜>";
const CALL_BEGIN = "<｜tool▁call▁begin｜>";
const CALL_END = "<｜tool▁call▁end｜>";
const SEP = "<｜tool▁sep｜>";
const FENCE = "```";

/**
 * DeepSeek V3 / R1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`.
 */
export const deepseekV3: BlockFormat = {
  family: "deepseek_v3",
  open: CALLS_BEGIN,
  close: [CALLS_END],
  parse: (content) =>
    eachCall(content, (head, body) => {
      if (head.trim() !== "function") return undefined;
      // NAME, then the arguments in a fence: read by position, not by a regex that could backtrack.
      const text = body.trim();
      const open = text.indexOf(FENCE);
      const close = text.lastIndexOf(FENCE);
      if (open === -1 || close <= open || !text.endsWith(FENCE)) return undefined;
      const inner = text.slice(open + FENCE.length, close);
      return jsonCall(text.slice(0, open).trim(), inner.startsWith("json") ? inner.slice("json".length) : inner);
    }),
};

/** DeepSeek V3.1 / V3.2-style: `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>`, no fence. */
export const deepseekV31: BlockFormat = {
  family: "deepseek_v31",
  open: CALLS_BEGIN,
  close: [CALLS_END],
  parse: (content) => eachCall(content, (head, body) => (head.trim() === "function" ? undefined : jsonCall(head.trim(), body))),
};

function eachCall(content: string, read: (head: string, body: string) => ParsedCall | undefined): BlockParse | undefined {
  const calls: ParsedCall[] = [];
  let rest = content.trim();
  while (rest !== "") {
    if (!rest.startsWith(CALL_BEGIN)) return undefined;
    rest = rest.slice(CALL_BEGIN.length);
    // The last call's end marker may be missing when the answer stopped there.
    const end = rest.indexOf(CALL_END);
    const one = end === -1 ? rest : rest.slice(0, end);
    rest = end === -1 ? "" : rest.slice(end + CALL_END.length).trim();
    const sep = one.indexOf(SEP);
    if (sep === -1) return undefined;
    const call = read(one.slice(0, sep), one.slice(sep + SEP.length));
    if (!call) return undefined;
    calls.push(call);
  }
  return calls.length > 0 ? { calls } : undefined;
}

function jsonCall(name: string, body: string): ParsedCall | undefined {
  if (!/^[A-Za-z0-9_.:-]{1,128}$/.test(name)) return undefined;
  const read = readJsonValue(body);
  if (!read || body.slice(read.end).trim() !== "") return undefined;
  return argumentsText(name, read.value);
}
