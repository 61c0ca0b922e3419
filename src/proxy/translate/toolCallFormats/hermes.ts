import { callsFromJson, parseJsonObject, readJsonValue } from "./jsonText.ts";
import type { BlockFormat } from "./types.ts";

/**
 * Hermes, Qwen 2.5/3, Granite 4 and xLAM: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`
 * (a list inside is allowed). The closing tag may be missing when the answer ends there.
 */
export const hermes: BlockFormat = {
  family: "hermes",
  open: "<tool_call>",
  close: ["</tool_call>"],
  parse(content) {
    const trimmed = content.trim();
    const read = readJsonValue(trimmed);
    if (!read || read.end !== trimmed.length) return undefined;
    const calls = callsFromJson(read.value);
    return calls ? { calls } : undefined;
  },
};

/** MiniMax-Text-01 / M1: `<tool_calls>` holding one JSON call per line. */
export const minimaxM1: BlockFormat = {
  family: "minimax_m1",
  open: "<tool_calls>",
  close: ["</tool_calls>"],
  parse(content) {
    const lines = content
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "");
    if (lines.length === 0) return undefined;
    const calls = [];
    for (const line of lines) {
      const object = parseJsonObject(line);
      const found = object && callsFromJson(object);
      if (!found) return undefined;
      calls.push(...found);
    }
    return { calls };
  },
};
