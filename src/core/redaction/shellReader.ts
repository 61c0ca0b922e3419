/**
 * Text read one character at a time the way the shell gets it: as it stands (a command), or as the
 * inside of JSON strings (a tool call's arguments), where `\"` is the shell's `"`, `\n` its newline,
 * `\\` its backslash, and a bare `"` ends the string. Indices stay the raw text's, so whatever is cut
 * between two characters read here leaves the JSON whole.
 */

/** The raw text ended. */
export const TEXT_END = -1;
/** A bare `"` in JSON text: the string, and any command in it, ends there. */
export const STRING_END = -2;

const BACKSLASH = 92;
const DOUBLE_QUOTE = 34;
const HEX4 = /^[0-9a-fA-F]{4}$/;

/** JSON's one-letter escapes and the characters they stand for. */
const JSON_ESCAPES: Record<number, number> = { 110: 10, 116: 9, 114: 13, 98: 8, 102: 12, 34: 34, 92: 92, 47: 47 };

export class ShellReader {
  /** How many raw characters the last character read took (0 at the end). */
  width = 1;

  /** Reads `text` up to `end` (its length when left out): a quoted part's inside is read as a text of its own. */
  constructor(
    readonly text: string,
    readonly json: boolean,
    readonly end = text.length,
  ) {}

  /** The character at raw index `at` (a code unit, TEXT_END or STRING_END); sets `width`. */
  at(at: number): number {
    const text = this.text;
    if (at >= this.end) {
      this.width = 0;
      return TEXT_END;
    }
    const code = text.charCodeAt(at);
    this.width = 1;
    if (!this.json || (code !== BACKSLASH && code !== DOUBLE_QUOTE)) return code;
    if (code === DOUBLE_QUOTE) return STRING_END;
    const letter = at + 1 < this.end ? text.charCodeAt(at + 1) : Number.NaN;
    const plain = JSON_ESCAPES[letter];
    if (plain !== undefined) {
      this.width = 2;
      return plain;
    }
    if (letter === 117 && at + 6 <= this.end && HEX4.test(text.slice(at + 2, at + 6))) {
      this.width = 6;
      return Number.parseInt(text.slice(at + 2, at + 6), 16);
    }
    // Not JSON's escape (the text is not quite JSON): the backslash stands for itself.
    return code;
  }
}
