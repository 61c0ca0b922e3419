import { ShellReader, STRING_END, TEXT_END } from "./shellReader.ts";

/**
 * mysql's password glued to `-p` (mysql -uroot -pX, -p'correct horse'), hidden in text that may be
 * a command. The text is split into words and commands as the shell splits it, from its start, so a
 * quote is known to open or to close: a ` -p` inside a quoted SQL string is no option, and no quoted
 * part is misread. A password is hidden in the commands where a MySQL client's word came first.
 * What is hidden never holds what could start another command when a second shell reads the word
 * again (ssh, eval, sh -c): `;&|<>()`, a backquote, a newline. The password is hidden up to the first
 * of them, quoted or escaped, or up to a quote left open (text that is no command, JSON held in a
 * string); the rest stays visible: a secret may show in part, a command never hides. A quoted part
 * naming a client is read again as commands (`sh -c 'mysql -pX'`, `ssh db "mysql -pX"`).
 */

const CLIENTS: ReadonlySet<string> = new Set(["mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mariadb", "mariadb-dump"]);
/** Where a client may be named: a text with none is passed over, a quoted part with none is not read again. */
const CLIENT_NAME = /mysql|mariadb/g;

const TAB = 9;
const NEWLINE = 10;
const CARRIAGE_RETURN = 13;
const SPACE = 32;
const DOUBLE_QUOTE = 34;
const HASH = 35;
const DOLLAR = 36;
const SINGLE_QUOTE = 39;
const OPEN_PAREN = 40;
const LESS = 60;
const BACKSLASH = 92;
const BACKQUOTE = 96;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/** What ends a command: `;`, `&`, `|`, a newline, and where a subshell or a substitution begins or ends. */
const ENDS_COMMAND = new Set([59, 38, 124, NEWLINE, CARRIAGE_RETURN, OPEN_PAREN, 41, BACKQUOTE]);
/** What ends a word besides them: blanks and redirections. */
const ENDS_WORD = new Set([...ENDS_COMMAND, SPACE, TAB, LESS, 62]);
/** What a second shell could start a command with, quoted or escaped for the first. */
const STARTS_COMMAND = new Set([...ENDS_COMMAND, LESS, 62]);

/** What JSON puts between its strings. */
const JSON_STRUCTURE = new Uint8Array(128);
for (const char of ",:{}[]") JSON_STRUCTURE[char.charCodeAt(0)] = 1;

/** The longest word compared with the clients' names (a path to one included). */
const NAME_LIMIT = 256;

interface Word {
  end: number;
  /** The word as the shell passes it on, quotes removed; only its first NAME_LIMIT characters. */
  value: string;
  /** The raw index of its first character that STARTS_COMMAND, or -1. */
  unsafeAt: number;
  /** Its quoted parts' insides, raw [start, end) (the closing quote's index as end). */
  parts: Array<[number, number]>;
}

/** How deep commands held in quotes are read (sh -c '…', ssh host "…", JSON held in a string). */
const NESTING_LIMIT = 3;

/** Raw [start, end) spans of the passwords to hide, in order. */
export function mysqlPasswordSpans(text: string, json: boolean): Array<[number, number]> {
  const names: number[] = [];
  for (const match of text.matchAll(CLIENT_NAME)) names.push(match.index);
  if (names.length === 0) return [];
  const spans: Array<[number, number]> = [];
  commandsIn(new ShellReader(text, json), 0, names, spans, 0);
  return spans;
}

/**
 * Reads the commands from `from` to the reader's end, adding the spans to hide. A quoted part that
 * names a client (`sh -c 'mysql -pX …'`) is read again as commands of its own.
 */
function commandsIn(reader: ShellReader, from: number, names: readonly number[], spans: Array<[number, number]>, depth: number): void {
  const text = reader.text;
  const scanner = new WordScanner(reader);
  let client = false;
  let heredoc: { delimiter: string; tabs: boolean } | undefined;
  for (let at = from; at < reader.end; ) {
    const code = reader.at(at);
    const width = reader.width;
    if (code === SPACE || code === TAB) {
      at += width;
    } else if (code === NEWLINE && heredoc) {
      at = afterHeredoc(reader, at + width, heredoc);
      heredoc = undefined;
      client = false;
    } else if (code === STRING_END || ENDS_COMMAND.has(code)) {
      client = false;
      heredoc = undefined;
      at += width;
    } else if (code === LESS && reader.at(at + width) === LESS && reader.at(at + 2 * width) !== LESS) {
      const delimiter = heredocDelimiter(scanner, at + 2 * width);
      if (delimiter.word) heredoc = { delimiter: delimiter.word, tabs: delimiter.tabs };
      at = delimiter.end;
    } else if (ENDS_WORD.has(code)) {
      at += width;
    } else if (code === HASH) {
      at = lineEnd(reader, at);
    } else {
      const word = scanner.word(at);
      if (CLIENTS.has(word.value.slice(word.value.lastIndexOf("/") + 1))) client = true;
      else if (client && text.startsWith("-p", at) && word.value.length > 2) {
        const end = word.unsafeAt === -1 ? word.end : word.unsafeAt;
        if (end > at + 2) spans.push([at + 2, end]);
      } else if (depth < NESTING_LIMIT)
        for (const [inside, close] of word.parts)
          if (namesWithin(names, inside, close)) commandsIn(new ShellReader(text, reader.json, close), inside, names, spans, depth + 1);
      at = word.end > at ? word.end : at + width;
    }
  }
}

/** Whether a client's name begins in [from, to): `names` is sorted. */
function namesWithin(names: readonly number[], from: number, to: number): boolean {
  let low = 0;
  let high = names.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (names[middle]! < from) low = middle + 1;
    else high = middle;
  }
  return low < names.length && names[low]! < to;
}

/** A quoted part's inside as readWord takes it: where it closes, its start (for the name), where it is unsafe. */
interface Part {
  /** Where its inside begins and its closing quote is. */
  inside: number;
  close: number;
  end: number;
  value: string;
  unsafeAt: number;
}

/**
 * Reads words, quoted parts and all. A part that did not close is remembered with what stopped it:
 * a later part of the same kind opening before that place cannot close either, and is not scanned
 * again (1 MiB of `${` would otherwise be read once from each).
 */
class WordScanner {
  readonly #openUntil = new Map<number, number>();

  constructor(readonly reader: ShellReader) {}

  /** Reads one word from `from`, which is neither a blank nor a word's end. */
  word(from: number): Word {
    const reader = this.reader;
    let value = "";
    let unsafeAt = -1;
    const parts: Array<[number, number]> = [];
    let dollarAt = -1;
    const take = (code: number, at: number) => {
      if (value.length < NAME_LIMIT) value += String.fromCharCode(code);
      // A `$` before a `(` is where a second shell's substitution begins.
      if (unsafeAt === -1 && STARTS_COMMAND.has(code)) unsafeAt = dollarAt === -1 || code !== OPEN_PAREN ? at : dollarAt;
      dollarAt = code === DOLLAR ? at : -1;
    };
    const takePart = (part: Part) => {
      if (value.length < NAME_LIMIT) value = (value + part.value).slice(0, NAME_LIMIT);
      if (unsafeAt === -1) unsafeAt = part.unsafeAt;
      dollarAt = -1;
      parts.push([part.inside, part.close]);
    };
    let at = from;
    for (;;) {
      const code = reader.at(at);
      const width = reader.width;
      if (code === TEXT_END || code === STRING_END || ENDS_WORD.has(code)) return { end: at, value, unsafeAt, parts };
      let part: Part | undefined;
      if (code === SINGLE_QUOTE) part = this.#quoted(at + width, SINGLE_QUOTE, false);
      else if (code === DOUBLE_QUOTE) part = this.#quoted(at + width, DOUBLE_QUOTE, true);
      else if (code === DOLLAR) {
        const next = reader.at(at + width);
        // A substitution is another command: the word ends where it begins.
        if (next === OPEN_PAREN) return { end: at, value, unsafeAt, parts };
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
        if ((code === SINGLE_QUOTE || code === DOUBLE_QUOTE) && unsafeAt === -1) unsafeAt = at;
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
    let doubleQuoted = quote === DOUBLE_QUOTE;
    let structure = false;
    let at = from;
    for (;;) {
      let code = reader.at(at);
      let width = reader.width;
      const where = at;
      if (code === quote) {
        // In JSON text a shell quote is an escaped one, as are the quotes of JSON held in the string:
        // a part that spans `","` or `":"` may be the space between two of its strings, and is no part.
        if (reader.json && doubleQuoted && structure) return undefined;
        return { inside: from, close: at, end: at + width, value, unsafeAt };
      }
      if (code === DOUBLE_QUOTE) doubleQuoted = true;
      else if (code < 128 && JSON_STRUCTURE[code] === 1) structure = true;
      const substitution = quote === DOUBLE_QUOTE && (code === BACKQUOTE || (code === DOLLAR && reader.at(at + width) === OPEN_PAREN));
      if (code === TEXT_END || code === STRING_END || substitution) {
        this.#openUntil.set(quote, at);
        return undefined;
      }
      if (escapes && code === BACKSLASH) {
        const escaped = reader.at(at + width);
        if (escaped === TEXT_END || escaped === STRING_END) {
          this.#openUntil.set(quote, at);
          return undefined;
        }
        width += reader.width;
        code = escaped;
      }
      if (value.length < NAME_LIMIT) value += String.fromCharCode(code);
      if (unsafeAt === -1 && STARTS_COMMAND.has(code)) unsafeAt = dollarAt === -1 || code !== OPEN_PAREN ? where : dollarAt;
      dollarAt = code === DOLLAR ? where : -1;
      at += width;
    }
  }
}

/** The index of the newline that ends the line `at` is on (a comment's end), or of the text's or string's end. */
function lineEnd(reader: ShellReader, from: number): number {
  let at = from;
  for (;;) {
    const code = reader.at(at);
    if (code === TEXT_END || code === STRING_END || code === NEWLINE) return at;
    at += reader.width;
  }
}

/** The word after `<<` (its quotes removed) and whether `<<-` lets the end line be indented by tabs. */
function heredocDelimiter(scanner: WordScanner, from: number): { word: string; tabs: boolean; end: number } {
  const reader = scanner.reader;
  let at = from;
  const tabs = reader.at(at) === 45;
  if (tabs) at += reader.width;
  for (let code = reader.at(at); code === SPACE || code === TAB; code = reader.at(at)) at += reader.width;
  const code = reader.at(at);
  if (code === TEXT_END || code === STRING_END || ENDS_WORD.has(code)) return { word: "", tabs, end: at };
  const word = scanner.word(at);
  return { word: word.value, tabs, end: word.end };
}

/** Just past the here-document that begins at `from` (the line after its command): after its delimiter's line. */
function afterHeredoc(reader: ShellReader, from: number, heredoc: { delimiter: string; tabs: boolean }): number {
  let at = from;
  for (;;) {
    const end = lineEnd(reader, at);
    let line = "";
    for (let i = at; i < end; i += reader.width) line += String.fromCharCode(reader.at(i));
    if ((heredoc.tabs ? line.replace(/^\t+/, "") : line) === heredoc.delimiter) return end;
    if (reader.at(end) !== NEWLINE) return end;
    at = end + reader.width;
  }
}
