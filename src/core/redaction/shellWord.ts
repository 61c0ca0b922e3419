/**
 * Where one shell word ends and where a command ends, read as the shell reads them, for hiding a
 * value given as a word (mysql's -p'a b'). Bias: a word may be cut short (part of a secret left
 * visible) but what it covers never holds what the shell would run. It stops at whitespace and at
 * every operator; a quoted part counts only when nothing inside it could start a command or a
 * substitution (`;|&<>()`, a backquote, `$`, a newline) and it closes; a quote that does not open
 * such a part, and `$'` or `$(`, end the word. A quote met mid-text may close a part begun earlier
 * (` -p` found inside a quoted string): the rule above keeps such a misread harmless.
 * Each quoted part is found by one native scan: 1 MiB of open quotes and escapes takes milliseconds.
 */

/** Characters a bare run takes at once: none that quote, escape, expand or end a word. */
const BARE_RUN = /[^ \t\n\r\v\f;|&<>()`'"\\$]+/y;
/** A single-quoted part: its closing quote, or a character it must not hold. */
const SINGLE_QUOTED = /'[^'\n;|&<>()`$]*'/y;
/** Characters no quoted part may hold: what could end the command or start a substitution. */
const NOT_IN_QUOTES = new Uint8Array(128);
for (const char of "\n;|&<>()`$") NOT_IN_QUOTES[char.charCodeAt(0)] = 1;

const BACKSLASH = 92;
const SINGLE_QUOTE = 39;
const DOUBLE_QUOTE = 34;
const DOLLAR = 36;

/** The index just past the word that begins at `from` in plain text; `from` itself when no word begins there. */
export function shellWordEnd(text: string, from: number): number {
  let at = from;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (code === SINGLE_QUOTE) {
      SINGLE_QUOTED.lastIndex = at;
      if (!SINGLE_QUOTED.test(text)) break;
      at = SINGLE_QUOTED.lastIndex;
    } else if (code === DOUBLE_QUOTE) {
      const end = doubleQuotedEnd(text, at);
      if (end === undefined) break;
      at = end;
    } else if (code === BACKSLASH) {
      // The next character is the word's, whatever it is (a newline: a continued line).
      at = Math.min(at + 2, text.length);
    } else if (code === DOLLAR) {
      const next = text[at + 1];
      if (next === "'" || next === "(") break;
      at++;
    } else {
      BARE_RUN.lastIndex = at;
      if (!BARE_RUN.test(text)) break;
      at = BARE_RUN.lastIndex;
    }
  }
  return at;
}

/** Just past the double-quoted part opening at `open`, or undefined when it does not close or holds what it must not. */
function doubleQuotedEnd(text: string, open: number): number | undefined {
  for (let at = open + 1; at < text.length; at++) {
    let code = text.charCodeAt(at);
    if (code === DOUBLE_QUOTE) return at + 1;
    // A backslash takes the next character into the part; it must still be one the part may hold.
    if (code === BACKSLASH) code = text.charCodeAt(++at);
    if (Number.isNaN(code) || (code < 128 && NOT_IN_QUOTES[code] === 1)) return undefined;
  }
  return undefined;
}

/** What JSON held in the string puts between two of its strings: a quoted part holding one of these and an escaped quote is refused. */
const JSON_STRUCTURE = new Uint8Array(128);
for (const char of ",:{}[]") JSON_STRUCTURE[char.charCodeAt(0)] = 1;

/**
 * Just past the quoted part opening at `open` in JSON text: `'…'`, or `\"…\"` when `escapedQuote`.
 * Inside, the shell's backslashes (`\\`) and escaped quotes (`\"` in single quotes, `\\\"` in
 * double ones) are the part's; any other escape, a bare quote or a character no quoted part may hold
 * refuses it. An escaped quote may also be a quote of JSON held in the string: a part with one and
 * with `,:{}[]` inside is refused, so the space between two of that JSON's strings is never taken for one.
 */
function jsonQuotedEnd(text: string, open: number, escapedQuote: boolean): number | undefined {
  let quotes = escapedQuote;
  let structure = false;
  for (let at = open + (escapedQuote ? 2 : 1); at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === BACKSLASH) {
      const run = backslashRun(text, at);
      const quoted = text.charCodeAt(at + run) === DOUBLE_QUOTE;
      if (escapedQuote && run === 1 && quoted) return quotes && structure ? undefined : at + 2;
      if (run % 2 === 1 && (!quoted || run !== (escapedQuote ? 3 : 1))) return undefined;
      quotes ||= quoted;
      at += run - 1 + (run % 2);
    } else if (code === SINGLE_QUOTE && !escapedQuote) return quotes && structure ? undefined : at + 1;
    else if (code === DOUBLE_QUOTE || (code < 128 && NOT_IN_QUOTES[code] === 1)) return undefined;
    else if (code < 128 && JSON_STRUCTURE[code] === 1) structure = true;
  }
  return undefined;
}

/**
 * The same in JSON text (a tool call's arguments), read as one level of JSON: the shell's `"` is
 * written `\"`, its backslash `\\`, and a bare `"` ends the string. The word never runs past a bare
 * `"` and never ends inside an escape, so a value hidden up to here leaves the text the JSON it was.
 * Any other escape (`\n`, `\t`, `\u…`, or a quote a level deeper) ends the word.
 */
export function shellWordEndInJson(text: string, from: number): number {
  let at = from;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (code === SINGLE_QUOTE) {
      const end = jsonQuotedEnd(text, at, false);
      if (end === undefined) break;
      at = end;
    } else if (code === BACKSLASH) {
      const run = backslashRun(text, at);
      if (run === 1 && text.charCodeAt(at + 1) === DOUBLE_QUOTE) {
        const end = jsonQuotedEnd(text, at, true);
        if (end === undefined) break;
        at = end;
        continue;
      }
      if (run % 2 === 1) break;
      at += run;
      // An odd number of the shell's backslashes escapes the character after them (not a bare quote: the string's end).
      if ((run / 2) % 2 === 1 && at < text.length && text.charCodeAt(at) !== DOUBLE_QUOTE) at++;
    } else if (code === DOLLAR) {
      const next = text[at + 1];
      if (next === "'" || next === "(") break;
      at++;
    } else {
      BARE_RUN.lastIndex = at;
      if (!BARE_RUN.test(text)) break;
      at = BARE_RUN.lastIndex;
    }
  }
  return at;
}

const COMMAND_STOP = /[\n;|&()`\\]/g;

/**
 * Where the command going on at `from` ends in plain text: a newline, `;`, `|` or `&`, unless a
 * backslash escapes it (an odd run of them: a continued line, a literal `;`), or where another
 * command begins inside it (`(`, a backquote: `$(…)`, `<(…)`). The text's length when it goes on to
 * the end. Quotes are not read: a `;` or `(` inside them ends the command here (a password after it
 * is then left visible, never hidden wrongly).
 */
export function shellCommandEnd(text: string, from: number): number {
  let at = from;
  for (;;) {
    COMMAND_STOP.lastIndex = at;
    const stop = COMMAND_STOP.exec(text);
    if (stop === null) return text.length;
    if (stop[0] !== "\\") return stop.index;
    const run = backslashRun(text, stop.index);
    at = stop.index + run + (run % 2);
  }
}

const JSON_COMMAND_STOP = /[;|&()`"\\]/g;

/**
 * The same in JSON text: a bare `"` ends the string and the command with it, and a newline is
 * written `\n` (an odd run of backslashes, then n or r), a continued line when the shell's own
 * backslashes before it are odd in number.
 */
export function jsonCommandEnd(text: string, from: number): number {
  let at = from;
  for (;;) {
    JSON_COMMAND_STOP.lastIndex = at;
    const stop = JSON_COMMAND_STOP.exec(text);
    if (stop === null) return text.length;
    if (stop[0] !== "\\") return stop.index;
    const run = backslashRun(text, stop.index);
    at = stop.index + run;
    if (run % 2 === 1) {
      const next = text[at];
      const shellBackslashes = (run - 1) / 2;
      if ((next === "n" || next === "r") && shellBackslashes % 2 === 0) return stop.index;
      at++;
    } else if ((run / 2) % 2 === 1 && at < text.length && text.charCodeAt(at) !== DOUBLE_QUOTE) at++;
  }
}

function backslashRun(text: string, from: number): number {
  let at = from;
  while (text.charCodeAt(at) === BACKSLASH) at++;
  return at - from;
}
