import { deepseekV3, deepseekV31 } from "./deepseek.ts";
import { glm45 } from "./glm45.ts";
import { granite } from "./granite.ts";
import { harmonyChannel, harmonyStart } from "./harmony.ts";
import { hermes, minimaxM1 } from "./hermes.ts";
import { jsonFence } from "./jsonFence.ts";
import { kimiK2 } from "./kimiK2.ts";
import { bareJson, llama3PythonTag } from "./llama3.ts";
import { minimaxM2 } from "./minimaxM2.ts";
import { mistral } from "./mistral.ts";
import { llama4Pythonic, pythonicList } from "./pythonic.ts";
import { qwen3Coder, qwen3CoderBare } from "./qwen3Coder.ts";
import type { FormatSet } from "./types.ts";

export type { BlockFormat, FormatSet, ParsedCall, ToolSchemas, WholeFormat } from "./types.ts";

/**
 * Each family a provider may name in `tool_call_format`, and what it recognises. Formats sharing a
 * marker are tried in the order listed (`<tool_call>`: JSON, then Qwen3-Coder, then GLM).
 */
export const FAMILIES: Readonly<Record<string, FormatSet>> = {
  hermes: { blocks: [hermes], whole: [] },
  qwen3_coder: { blocks: [qwen3Coder, qwen3CoderBare], whole: [] },
  glm45: { blocks: [glm45], whole: [] },
  mistral: { blocks: [mistral], whole: [] },
  llama3: { blocks: [llama3PythonTag], whole: [bareJson] },
  pythonic: { blocks: [llama4Pythonic], whole: [pythonicList] },
  deepseek_v3: { blocks: [deepseekV3, deepseekV31], whole: [] },
  deepseek_v31: { blocks: [deepseekV31, deepseekV3], whole: [] },
  kimi_k2: { blocks: [kimiK2], whole: [] },
  minimax_m2: { blocks: [minimaxM2], whole: [] },
  minimax_m1: { blocks: [minimaxM1], whole: [] },
  granite: { blocks: [granite, hermes], whole: [] },
  harmony: { blocks: [harmonyStart, harmonyChannel], whole: [] },
  xlam: { blocks: [jsonFence, hermes, mistral], whole: [bareJson] },
  json_fence: { blocks: [jsonFence], whole: [] },
};

/** Detection by marker: every family at once (their markers do not collide), plus the whole-answer forms. */
export const AUTO: FormatSet = {
  blocks: [
    hermes,
    qwen3Coder,
    glm45,
    qwen3CoderBare,
    mistral,
    llama3PythonTag,
    llama4Pythonic,
    deepseekV3,
    deepseekV31,
    kimiK2,
    minimaxM2,
    minimaxM1,
    granite,
    harmonyStart,
    harmonyChannel,
    jsonFence,
  ],
  whole: [bareJson, pythonicList],
};

export function formatSet(family: string): FormatSet {
  return family === "auto" ? AUTO : (FAMILIES[family] ?? AUTO);
}
