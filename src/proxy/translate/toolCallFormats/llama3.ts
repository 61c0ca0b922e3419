import { callsFromJsonSequence } from "./jsonText.ts";
import type { BlockFormat, WholeFormat } from "./types.ts";

/** Llama 3.1-3.3 built-in style: `<|python_tag|>{"name": …, "parameters": {…}}` to the end of the answer. */
export const llama3PythonTag: BlockFormat = {
  family: "llama3",
  open: "<|python_tag|>",
  close: ["<|eom_id|>", "<|eot_id|>"],
  parse(content) {
    const calls = callsFromJsonSequence(content);
    return calls ? { calls } : undefined;
  },
};

/**
 * Llama 3 JSON and xLAM lists with no marker: `{"name": …, "parameters": {…}}` (several joined by
 * `;`) or `[{"name": …, "arguments": {…}}, …]`, recognised only as the whole answer.
 */
export const bareJson: WholeFormat = {
  family: "json",
  startsWith: ["{", "["],
  parse: (answer) => callsFromJsonSequence(answer),
};
