import { stripAnsi } from "../core/text/index.ts";
import { maxBytesForTokens, splitHeadTail, truncationMarker } from "./truncation.ts";

export interface RenderOptions {
  maxOutputTokens: number;
  stripAnsi: boolean;
}

export interface RenderedOutput {
  output: string;
  truncated: boolean;
  /** Size of the raw terminal output this text stands for. */
  originalBytes: number;
}

const decoder = new TextDecoder("utf-8");
const encoder = new TextEncoder();

/** Turns raw terminal bytes into the text a caller gets: ANSI kept byte-exact unless asked, head+tail within the token budget. */
export function renderOutput(raw: Uint8Array, options: RenderOptions): RenderedOutput {
  const bytes = options.stripAnsi ? encoder.encode(stripAnsi(decoder.decode(raw))) : raw;
  const split = splitHeadTail(bytes, maxBytesForTokens(options.maxOutputTokens));
  if (!split) return { output: decoder.decode(bytes), truncated: false, originalBytes: raw.length };
  return {
    output: decoder.decode(split.head) + truncationMarker(split.omittedBytes) + decoder.decode(split.tail),
    truncated: true,
    originalBytes: raw.length,
  };
}
