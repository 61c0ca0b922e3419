import { callsFromJson, readJsonValue } from "./jsonText.ts";
import type { BlockFormat } from "./types.ts";

/** Info strings a fenced call is written under; any other language is code, streamed as text. */
const INFO = /^(?:json|tool_calls?|)$/i;

/**
 * A fenced JSON block holding only a call or a list of calls (xLAM and many chat-tuned models):
 * ```` ```json\n{"name": …, "arguments": {…}}\n``` ````. Any other fenced code stays text.
 */
export const jsonFence: BlockFormat = {
  family: "json_fence",
  open: "```",
  close: ["```"],
  parse(content) {
    const newline = content.indexOf("\n");
    const info = newline === -1 ? "" : content.slice(0, newline).trim();
    if (!INFO.test(info) && !/^\s*[[{]/.test(content)) return undefined;
    const body = INFO.test(info) && newline !== -1 ? content.slice(newline + 1) : content;
    const trimmed = body.trim();
    const read = readJsonValue(trimmed);
    const calls = read && read.end === trimmed.length ? callsFromJson(read.value) : undefined;
    return calls ? { calls } : undefined;
  },
  rejects(content) {
    if (/^\s*[[{]/.test(content)) return false;
    const newline = content.indexOf("\n");
    if (newline === -1) return !/^[A-Za-z0-9_-]*$/.test(content);
    if (!INFO.test(content.slice(0, newline).trim())) return true;
    const body = content.slice(newline + 1).trimStart();
    return body !== "" && body[0] !== "{" && body[0] !== "[";
  },
  // Prose fences JSON of every kind: one that is not a call says nothing of what the model meant.
  meantAsCall: () => false,
};
