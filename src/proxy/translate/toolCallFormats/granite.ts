import { callsFromJson, readJsonValue } from "./jsonText.ts";
import type { BlockFormat } from "./types.ts";

/** Granite 3.x: `<|tool_call|>[{"name": …, "arguments": {…}}, …]` to the end of the answer. */
export const granite: BlockFormat = {
  family: "granite",
  open: "<|tool_call|>",
  close: [],
  parse(content) {
    const read = readJsonValue(content);
    const calls = read && callsFromJson(read.value);
    return read && calls ? { calls, after: content.slice(read.end) } : undefined;
  },
};
