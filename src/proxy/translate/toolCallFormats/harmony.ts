import { argumentsText, readJsonValue } from "./jsonText.ts";
import type { BlockFormat, BlockParse } from "./types.ts";

const MESSAGE = "<|message|>";
const RECIPIENT = /(?:^|\s)to=functions\.([A-Za-z0-9_.-]{1,128})(?=[\s<]|$)/;
/** What a header may hold once its `<|channel|>` and `<|constrain|>` tokens are set aside. */
const HEADER_CHARS = /^[\sA-Za-z0-9_.=-]*$/;

/**
 * gpt-oss (harmony) written out as text: `<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>`
 * (the recipient may also stand before `<|channel|>`). Only a message addressed to a function is
 * a call; analysis and final messages stay text as written.
 */
function harmonyCall(content: string): BlockParse | undefined {
  const at = content.indexOf(MESSAGE);
  if (at === -1) return undefined;
  const header = content.slice(0, at);
  const recipient = RECIPIENT.exec(header);
  if (!recipient || !HEADER_CHARS.test(header.replace(/<\|(?:channel|constrain)\|>/g, " "))) return undefined;
  const body = content.slice(at + MESSAGE.length);
  if (body.trim() === "") return { calls: [{ name: recipient[1]!, arguments: "{}" }] };
  const read = readJsonValue(body);
  const call = read && body.slice(read.end).trim() === "" ? argumentsText(recipient[1]!, read.value) : undefined;
  return call ? { calls: [call] } : undefined;
}

/** Only a message addressed to a function was meant as a call; analysis and final messages were not. */
function addressedToFunction(content: string): boolean {
  const at = content.indexOf(MESSAGE);
  return RECIPIENT.test(at === -1 ? content : content.slice(0, at));
}

const CLOSE = ["<|call|>", "<|end|>", "<|return|>"];

export const harmonyStart: BlockFormat = {
  family: "harmony",
  open: "<|start|>",
  close: CLOSE,
  parse: harmonyCall,
  meantAsCall: addressedToFunction,
};
export const harmonyChannel: BlockFormat = {
  family: "harmony",
  open: "<|channel|>",
  close: CLOSE,
  parse: harmonyCall,
  meantAsCall: addressedToFunction,
};
