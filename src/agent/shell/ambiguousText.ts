import { AgentdError } from "../../core/errors/index.ts";

/** A backslash ending a line: bash removes it and the line break, so the two lines are one word. */
const LINE_CONTINUATION = /\\\r?\n/;
/**
 * Characters bash and an approval card read differently: controls but tab and newline (bash takes
 * CR, VT, FF, ESC… as part of a word; a card may break the line there, or a terminal act on them),
 * Unicode line breaks, and spaces other than U+0020 (bash: part of the word; the card: a gap).
 */
const AMBIGUOUS_CHAR = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]|(?! )\p{Zs}/u;

/**
 * What in `text` bash could read otherwise than a person reading the approval card (or agentd's
 * own parser), as a phrase for the refusal; undefined when nothing. Pure.
 */
export function ambiguity(text: string): string | undefined {
  if (LINE_CONTINUATION.test(text))
    return "a backslash-newline, which bash removes, joining the two lines (into one word when no blank is between) while the approval card shows two lines; write it on one line";
  // Each reader would put its own replacement character in its place.
  if (!text.isWellFormed()) return "a lone UTF-16 surrogate, which is no character at all";
  const char = AMBIGUOUS_CHAR.exec(text)?.[0];
  if (char === undefined) return undefined;
  const code = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
  if (char === "\0") return "a NUL character, which bash cannot be given";
  if (char === "\r")
    return `a carriage return (${code}), which bash reads as part of a word while the approval card may break the line there; end lines with \\n alone`;
  const spell = "spell it with printf or $'\\…' escapes instead";
  if (/\p{Zs}/u.test(char))
    return `a space character (${code}) that bash reads as part of a word while the approval card shows a gap; ${spell}`;
  return `a control or line-break character (${code}), which the approval card cannot show as bash reads it; ${spell}`;
}

/** A command refused before anyone is asked, because what a person would approve is not what runs. */
export class AmbiguousCommandError extends AgentdError {
  constructor(doing: string, holds: string) {
    super("command_ambiguous", `Cannot ${doing} as written: it holds ${holds}`);
  }
}

/** Throws AmbiguousCommandError for the first of `texts` that is ambiguous. */
export function refuseAmbiguous(doing: string, texts: readonly string[]): void {
  for (const text of texts) {
    const holds = ambiguity(text);
    if (holds !== undefined) throw new AmbiguousCommandError(doing, holds);
  }
}
