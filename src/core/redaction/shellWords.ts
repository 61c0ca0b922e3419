import { type ShellReader, STRING_END, TEXT_END } from "./shellReader.ts";

/**
 * Shell words as the shell reads them from a ShellReader: quoted parts (`'…'`, `"…"`, `$'…'`, `${…}`),
 * escapes, and what each word passes on. Besides its end and its value, a word tells where in it the
 * first character is that a second shell reading it again would act on, so a caller hiding part of it
 * knows where to stop.
 */

export const TAB = 9;
export const NEWLINE = 10;
const CARRIAGE_RETURN = 13;
export const SPACE = 32;
const DOUBLE_QUOTE = 34;
export const HASH = 35;
const DOLLAR = 36;
const SINGLE_QUOTE = 39;
const OPEN_PAREN = 40;
export const LESS = 60;
const BACKSLASH = 92;
const BACKQUOTE = 96;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/** What ends a command: `;`, `&`, `|`, a newline, and where a subshell or a substitution begins or ends. */
export const ENDS_COMMAND = new Set([59, 38, 124, NEWLINE, CARRIAGE_RETURN, OPEN_PAREN, 41, BACKQUOTE]);
/** What ends a word besides them: blanks and redirections. */
export const ENDS_WORD = new Set([...ENDS_COMMAND, SPACE, TAB, LESS, 62]);
/** What a second shell could start a command with, quoted or escaped for the first. */
const STARTS_COMMAND = new Set([...ENDS_COMMAND, LESS, 62]);

/** What a shell reading a word again splits or quotes on: blanks, quotes, a backslash. */
const REREAD = new Set([SPACE, TAB, SINGLE_QUOTE, DOUBLE_QUOTE, BACKSLASH]);

/** What JSON puts between its strings. */
const JSON_STRUCTURE = new Uint8Array(128);
for (const char of ",:{}[]") JSON_STRUCTURE[char.charCodeAt(0)] = 1;

/** Characters that are only themselves in a word and in quotes (no end, quote, escape, `$`, blank or JSON structure): read a run at once. */
const PLAIN_RUN = /[^ \t\n\r;&|<>()`'"\\$,:{}[\]]+/y;

/** The longest word compared with the clients' names (a path to one included). */
const NAME_LIMIT = 256;

export interface Word {
  end: number;
  /** The word as the shell passes it on, quotes removed; only its first NAME_LIMIT characters. */
  value: string;
  /** The raw index of its first character that STARTS_COMMAND, or -1. */
  unsafeAt: number;
  /** The raw index of its first blank, quote or backslash passed on (quoted or escaped), or -1. */
  blankAt: number;
  /** Its quoted parts' insides, raw [start, end) (the closing quote's index as end), and whether each is passed on as it stands. */
  parts: Array<[number, number, boolean]>;
  /** A quote in it was left open: from there on, its command is not read as the shell would. */
  openQuote: boolean;
}

/** A quoted part's inside as readWord takes it: where it closes, its start (for the name), where it is unsafe. */
interface Part {
  /** Where its inside begins and its closing quote is, and whether the inside is passed on as it stands (no escape in it). */
  inside: number;
  close: number;
  literal: boolean;
  end: number;
  value: string;
  unsafeAt: number;
  blankAt: number;
}

/**
 * Reads words, quoted parts and all. A part that did not close is remembered with what stopped it:
 * a later part of the same kind opening before that place cannot close either, and is not scanned
 * again (1 MiB of `${` would otherwise be read once from each).
 */
export class WordScanner {
  readonly #openUntil = new Map<number, number>();
  /** Where the last substitution or quoted string read to without closing. */
  #failedAt = 0;

  constructor(readonly reader: ShellReader) {}

  /**
   * Just past the `)` (or backquote) that ends a substitution whose inside begins at `from`: nested
   * parentheses counted, quoted parts and escapes passed over; undefined when the text or string ends first.
   */
  #substitutionEnd(from: number, backquoted: boolean): number | undefined {
    const reader = this.reader;
    let depth = 1;
    for (let at = from; ; ) {
      const code = reader.at(at);
      const width = reader.width;
      if (code === TEXT_END || code === STRING_END) {
        this.#failedAt = at;
        return undefined;
      }
      if (backquoted ? code === BACKQUOTE : code === 41 && --depth === 0) return at + width;
      if (code === OPEN_PAREN) depth++;
      if (code === BACKSLASH) {
        reader.at(at + width);
        at += width + reader.width;
        continue;
      }
      if (code === SINGLE_QUOTE || code === DOUBLE_QUOTE) {
        const close = this.#quoteEnd(at + width, code);
        if (close === undefined) {
          this.#failedAt = this.reader.end;
          return undefined;
        }
        at = close;
        continue;
      }
      at += width;
    }
  }

  /** Just past the `quote` closing a quoted string inside a substitution (a backslash escapes in double quotes). */
  #quoteEnd(from: number, quote: number): number | undefined {
    const reader = this.reader;
    for (let at = from; ; ) {
      const code = reader.at(at);
      const width = reader.width;
      if (code === TEXT_END || code === STRING_END) return undefined;
      if (code === quote) return at + width;
      if (code === BACKSLASH && quote === DOUBLE_QUOTE) {
        reader.at(at + width);
        at += width + reader.width;
      } else at += width;
    }
  }

  /** The end of the run of plain characters at `from` (`from` when none is there), within the reader's end. */
  #plainRun(from: number): number {
    PLAIN_RUN.lastIndex = from;
    if (!PLAIN_RUN.test(this.reader.text)) return from;
    return Math.min(PLAIN_RUN.lastIndex, this.reader.end);
  }

  /** Reads one word from `from`, which is neither a blank nor a word's end. */
  word(from: number): Word {
    const reader = this.reader;
    let value = "";
    let unsafeAt = -1;
    let blankAt = -1;
    const parts: Array<[number, number, boolean]> = [];
    let openQuote = false;
    let dollarAt = -1;
    const take = (code: number, at: number) => {
      if (value.length < NAME_LIMIT) value += String.fromCharCode(code);
      if (blankAt === -1 && REREAD.has(code)) blankAt = at;
      // A `$` before a `(` is where a second shell's substitution begins.
      if (unsafeAt === -1 && STARTS_COMMAND.has(code)) unsafeAt = dollarAt === -1 || code !== OPEN_PAREN ? at : dollarAt;
      dollarAt = code === DOLLAR ? at : -1;
    };
    const takePart = (part: Part) => {
      if (value.length < NAME_LIMIT) value = (value + part.value).slice(0, NAME_LIMIT);
      if (unsafeAt === -1) unsafeAt = part.unsafeAt;
      if (blankAt === -1) blankAt = part.blankAt;
      dollarAt = -1;
      parts.push([part.inside, part.close, part.literal]);
    };
    let at = from;
    for (;;) {
      const run = this.#plainRun(at);
      if (run > at) {
        if (value.length < NAME_LIMIT) value += reader.text.slice(at, Math.min(run, at + NAME_LIMIT - value.length));
        dollarAt = -1;
        at = run;
      }
      const code = reader.at(at);
      const width = reader.width;
      if (code === TEXT_END || code === STRING_END || ENDS_WORD.has(code)) return { end: at, value, unsafeAt, blankAt, parts, openQuote };
      let part: Part | undefined;
      if (code === SINGLE_QUOTE) part = this.#quoted(at + width, SINGLE_QUOTE, false);
      else if (code === DOUBLE_QUOTE) part = this.#quoted(at + width, DOUBLE_QUOTE, true);
      else if (code === DOLLAR) {
        const next = reader.at(at + width);
        // A substitution is another command: the word ends where it begins.
        if (next === OPEN_PAREN) return { end: at, value, unsafeAt, blankAt, parts, openQuote };
        const inside = at + width + reader.width;
        if (next === SINGLE_QUOTE) part = this.#quoted(inside, SINGLE_QUOTE, true);
        else if (next === OPEN_BRACE) part = this.#quoted(inside, CLOSE_BRACE, false);
      } else if (code === BACKSLASH) {
        const escaped = reader.at(at + width);
        if (escaped !== TEXT_END && escaped !== STRING_END) {
          // An escaped newline joins two lines: nothing of it is passed on.
          if (escaped !== NEWLINE) take(escaped, at);
          at += width + reader.width;
          continue;
        }
      }
      if (part) {
        takePart(part);
        at = part.end;
      } else {
        // A quote left open is no quote (text that is not a command, or JSON held in the string): taken
        // as a character, and nothing from it on is hidden.
        if (code === SINGLE_QUOTE || code === DOUBLE_QUOTE) {
          openQuote = true;
          if (unsafeAt === -1) unsafeAt = at;
        }
        take(code, at);
        at += width;
      }
    }
  }

  /**
   * The part whose inside begins at `from`, up to the `quote` that closes it (a backslash escapes
   * the next character when `escapes`); undefined when the text or its JSON string ends first, or
   * (in a double-quoted part) a substitution begins inside.
   */
  #quoted(from: number, quote: number, escapes: boolean): Part | undefined {
    if (from < (this.#openUntil.get(quote) ?? -1)) return undefined;
    const reader = this.reader;
    let value = "";
    let unsafeAt = -1;
    let dollarAt = -1;
    let blankAt = -1;
    let doubleQuoted = quote === DOUBLE_QUOTE;
    /** A backslash escaped something inside: the inside as it stands is not what the quotes pass on. */
    let escaped = false;
    let structure = false;
    let at = from;
    for (;;) {
      const run = this.#plainRun(at);
      if (run > at) {
        if (value.length < NAME_LIMIT) value += reader.text.slice(at, Math.min(run, at + NAME_LIMIT - value.length));
        dollarAt = -1;
        at = run;
      }
      let code = reader.at(at);
      let width = reader.width;
      const where = at;
      if (code === quote) {
        // In JSON text a shell quote is an escaped one, as are the quotes of JSON held in the string:
        // a part that spans `","` or `":"` may be the space between two of its strings, and is no part.
        if (reader.json && doubleQuoted && structure) {
          this.#openUntil.set(quote, at);
          return undefined;
        }
        return { inside: from, close: at, end: at + width, literal: !escaped, value, unsafeAt, blankAt };
      }
      if (code === DOUBLE_QUOTE) doubleQuoted = true;
      else if (code < 128 && JSON_STRUCTURE[code] === 1) structure = true;
      if (quote === DOUBLE_QUOTE && (code === BACKQUOTE || (code === DOLLAR && reader.at(at + width) === OPEN_PAREN))) {
        // A substitution inside: another command, passed over to its end; nothing from it on is hidden.
        const end = this.#substitutionEnd(code === BACKQUOTE ? at + width : at + width + reader.width, code === BACKQUOTE);
        if (end === undefined) {
          // Read to the end without closing: no double-quoted part opening before there closes either (a
          // part inside it would be taken for one, and the text is no command the shell would run).
          this.#openUntil.set(quote, this.#failedAt);
          return undefined;
        }
        if (unsafeAt === -1) unsafeAt = where;
        escaped = true;
        at = end;
        continue;
      }
      if (code === TEXT_END || code === STRING_END) {
        this.#openUntil.set(quote, at);
        return undefined;
      }
      if (escapes && code === BACKSLASH) {
        // In $'…' an escape makes a character of its own (\n, \x3b): what it passes on is not read here.
        if (quote === SINGLE_QUOTE && unsafeAt === -1) unsafeAt = where;
        const next = reader.at(at + width);
        if (next === TEXT_END || next === STRING_END) {
          this.#openUntil.set(quote, at);
          return undefined;
        }
        width += reader.width;
        code = next;
        escaped = true;
      }
      if (value.length < NAME_LIMIT) value += String.fromCharCode(code);
      if (blankAt === -1 && REREAD.has(code)) blankAt = where;
      if (unsafeAt === -1 && STARTS_COMMAND.has(code)) unsafeAt = dollarAt === -1 || code !== OPEN_PAREN ? where : dollarAt;
      dollarAt = code === DOLLAR ? where : -1;
      at += width;
    }
  }
}
