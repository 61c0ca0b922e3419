/**
 * Characters that change how text looks without being seen: bidirectional overrides and isolates
 * (U+202E), zero-width spaces and joiners, soft hyphens, line and paragraph separators. In a
 * command an approver reads they can reorder or hide what will run (Trojan Source). Pure.
 */
const INVISIBLE = /[\p{Cf}\u2028\u2029]/u;
const INVISIBLE_ALL = /[\p{Cf}\u2028\u2029]/gu;

export function hasInvisibleChars(text: string): boolean {
  return INVISIBLE.test(text);
}

/** `text` with each such character shown by its code point, as <U+202E>. */
export function revealInvisibleChars(text: string): string {
  return text.replace(INVISIBLE_ALL, (char) => `<U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}>`);
}

/** For one line of a terminal listing: also newlines, carriage returns and tabs shown as \n, \r, \t, so text cannot draw lines of its own. */
export function oneLine(text: string): string {
  return revealInvisibleChars(text).replace(/[\n\r\t]/g, (char) => (char === "\n" ? "\\n" : char === "\r" ? "\\r" : "\\t"));
}
