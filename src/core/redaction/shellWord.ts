/**
 * Where one shell word ends, read the way the shell reads it: quoted parts ('a b', "a \" b") and bare
 * ones, a backslash taking the character after it, a quote left open counted as a bare character.
 * Bias: a word may be cut short (part of a secret left visible) but never reaches past what the shell
 * runs: it stops at whitespace and at a shell operator, also inside quotes, and a double-quoted part
 * holding `(` (a `$(…)` the shell runs) or a backquote is no quoted part. Quoted parts are looked
 * for with one native scan each, not a test per character: 1 MiB of escapes and open quotes then
 * takes milliseconds.
 */

/** Ends a word: ASCII whitespace (the shell splits on nothing else), a command's end, a redirection, a subshell, a backquote. */
const BARE_RUN = /[^ \t\n\r\v\f;|&<>()`'"\\]+/y;
/** Where a single-quoted part ends: its closing quote, or an end it must not reach past. */
const SINGLE_QUOTED_STOP = /['\n;|&<>`]/g;
/** Where a double-quoted part ends: its closing quote, an escape, or an end it must not reach past. */
const DOUBLE_QUOTED_STOP = /["\\\n;|&<>`(]/g;

const BACKSLASH = 92;
const SINGLE_QUOTE = 39;
const DOUBLE_QUOTE = 34;

/** The index just past the word that begins at `from`; `from` itself when no word begins there. */
export function shellWordEnd(text: string, from: number): number {
  let at = from;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (code === SINGLE_QUOTE) at = closingAt(text, at, SINGLE_QUOTED_STOP, "'") ?? at + 1;
    else if (code === DOUBLE_QUOTE) at = doubleQuotedEnd(text, at) ?? at + 1;
    // A backslash keeps the next character in the word, a newline too (a continued line).
    else if (code === BACKSLASH) at = Math.min(at + 2, text.length);
    else {
      BARE_RUN.lastIndex = at;
      if (!BARE_RUN.test(text)) break;
      at = BARE_RUN.lastIndex;
    }
  }
  return at;
}

/** Just past the quote closing the one at `open`: the first stop found must be that quote. */
function closingAt(text: string, open: number, stops: RegExp, quote: string): number | undefined {
  stops.lastIndex = open + 1;
  const stop = stops.exec(text);
  return stop?.[0] === quote ? stops.lastIndex : undefined;
}

function doubleQuotedEnd(text: string, open: number): number | undefined {
  let at = open + 1;
  for (;;) {
    DOUBLE_QUOTED_STOP.lastIndex = at;
    const stop = DOUBLE_QUOTED_STOP.exec(text);
    if (stop === null) return undefined;
    if (stop[0] === '"') return DOUBLE_QUOTED_STOP.lastIndex;
    if (stop[0] !== "\\") return undefined;
    at = stop.index + 2;
  }
}

/**
 * The same inside JSON text (a tool call's arguments), where the shell's `"` is written `\"` (`\\\"`
 * a level deeper: an odd run of backslashes before it) and a bare `"` ends the JSON string. The word
 * never runs past a bare `"` and never ends inside an escape, so a value hidden up to here leaves
 * the text the JSON it was. A JSON escape other than a quote's or a backslash's (`\n`, `\t`, `\u…`)
 * ends the word. An escaped quote is a shell quote only at the word's start and only when its
 * closing one ends the word: elsewhere it may be the quote of JSON held in the string (`{\"cmd\":…}`),
 * and the word stops there.
 */
export function shellWordEndInJson(text: string, from: number): number {
  let at = from;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (code === SINGLE_QUOTE) {
      at = jsonSingleQuotedEnd(text, at) ?? at + 1;
      continue;
    }
    if (code !== BACKSLASH) {
      BARE_RUN.lastIndex = at;
      if (!BARE_RUN.test(text)) break;
      at = BARE_RUN.lastIndex;
      continue;
    }
    const run = backslashRun(text, at);
    if (run % 2 === 0) {
      at += run;
      continue;
    }
    // An odd run: its last backslash escapes what follows, a quote (the shell's) or anything else (the word's end).
    if (text.charCodeAt(at + run) !== DOUBLE_QUOTE) return at + run - 1;
    if (at !== from) return at;
    const end = jsonDoubleQuotedEnd(text, at, run);
    return end !== undefined && endsWordInJson(text, end) ? end : from;
  }
  return at;
}

/** Where a single-quoted part in JSON text ends: its quote, a backslash (an escape), a bare quote or an end. */
const JSON_SINGLE_QUOTED_STOP = /['"\\\n;|&<>`]/g;
/** Where an escaped double-quoted part ends: a backslash (its closing quote or another escape), a bare quote, an end. */
const JSON_DOUBLE_QUOTED_STOP = /["\\\n;|&<>`(]/g;

/** Just past the `'` closing the one at `open`; escaped quotes and backslashes inside are the shell's characters. */
function jsonSingleQuotedEnd(text: string, open: number): number | undefined {
  let at = open + 1;
  for (;;) {
    JSON_SINGLE_QUOTED_STOP.lastIndex = at;
    const stop = JSON_SINGLE_QUOTED_STOP.exec(text);
    if (stop === null || (stop[0] !== "'" && stop[0] !== "\\")) return undefined;
    if (stop[0] === "'") return JSON_SINGLE_QUOTED_STOP.lastIndex;
    const run = backslashRun(text, stop.index);
    if (run % 2 === 1 && text.charCodeAt(stop.index + run) !== DOUBLE_QUOTE) return undefined;
    at = stop.index + run + (run % 2);
  }
}

/** Just past the escaped quote (`run` backslashes and `"`) closing the one at `open`; deeper escaped quotes and backslashes are inside. */
function jsonDoubleQuotedEnd(text: string, open: number, run: number): number | undefined {
  let at = open + run + 1;
  for (;;) {
    JSON_DOUBLE_QUOTED_STOP.lastIndex = at;
    const stop = JSON_DOUBLE_QUOTED_STOP.exec(text);
    if (stop === null || stop[0] !== "\\") return undefined;
    const inner = backslashRun(text, stop.index);
    const quoted = text.charCodeAt(stop.index + inner) === DOUBLE_QUOTE;
    if (inner === run && quoted) return stop.index + inner + 1;
    if (inner % 2 === 1 && !quoted) return undefined;
    at = stop.index + inner + (inner % 2);
  }
}

/** Whether a word ends at `at` in JSON text: its end, a bare quote, whitespace, an operator, or an escape other than a quote's. */
function endsWordInJson(text: string, at: number): boolean {
  if (at >= text.length) return true;
  const code = text.charCodeAt(at);
  if (code === DOUBLE_QUOTE) return true;
  if (code !== BACKSLASH) return " \t\n\r\v\f;|&<>()`".includes(text[at]!);
  const run = backslashRun(text, at);
  return run % 2 === 1 && text.charCodeAt(at + run) !== DOUBLE_QUOTE;
}

function backslashRun(text: string, from: number): number {
  let at = from;
  while (text.charCodeAt(at) === BACKSLASH) at++;
  return at - from;
}

/** A command's end in plain text: a newline (not a continued line's), `;`, `|` or `&`. */
const COMMAND_END = /(?<!\\)\n|[;|&]/g;

/** Where the command that goes on at `from` ends (the text's length when it does not). */
export function shellCommandEnd(text: string, from: number): number {
  COMMAND_END.lastIndex = from;
  return COMMAND_END.exec(text)?.index ?? text.length;
}

const JSON_COMMAND_STOP = /[;|&"\\]/g;

/**
 * The same in JSON text: there a newline is written `\n` (an odd run of backslashes, then n or r; an
 * even run is the shell's own backslashes), and a bare quote ends the JSON string and the command with it.
 */
export function jsonCommandEnd(text: string, from: number): number {
  let at = from;
  for (;;) {
    JSON_COMMAND_STOP.lastIndex = at;
    const stop = JSON_COMMAND_STOP.exec(text);
    if (stop === null) return text.length;
    if (stop[0] !== "\\") return stop.index;
    const run = backslashRun(text, stop.index);
    const next = text[stop.index + run];
    if (run % 2 === 1 && (next === "n" || next === "r")) return stop.index;
    // An odd run escapes what follows (a quote, say); an even run leaves a quote after it bare, found next.
    at = stop.index + run + (run % 2);
  }
}
