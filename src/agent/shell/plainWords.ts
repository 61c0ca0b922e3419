/** Unquoted characters that are never special to bash (no glob, tilde, brace, expansion or operator). */
const PLAIN = /^[\p{L}\p{N}_@%+=:,./-]$/u;
/** Characters a backslash may quote outside quotes: printable ones, never a line break or a control. */
const ESCAPABLE = /^[\x20-\x7e\p{L}\p{N}]$/u;
/** Inside double quotes a backslash quotes only these; before anything else it stays. */
const DOUBLE_QUOTE_ESCAPES = new Set(["$", "`", '"', "\\"]);
const BLANK = new Set([" ", "\t"]);

/**
 * The words of `text` when it is one simple command of plain words, read by bash's own rules over
 * a small part of the language, so the result is the argv bash would give it: words of plain
 * characters, backslash-quoted printable characters, '…', and "…" without $ or `; blanks between;
 * a `{}` (bash expands no empty braces); at the end one `;` or `&`, a comment, blank lines.
 * Undefined for anything else — an expansion of any kind, an operator, a line continuation, a NUL —
 * since this reader is the one thing that must agree with bash exactly. Pure.
 */
export function plainWords(text: string): string[] | undefined {
  // bash is given C strings: it would never see a NUL or what follows it.
  if (text.includes("\0")) return undefined;
  // By code point, so a letter outside the BMP is one character.
  const chars = Array.from(text);
  const words: string[] = [];
  let i = 0;
  const skipBlanks = () => {
    while (BLANK.has(chars[i]!)) i++;
  };
  for (;;) {
    skipBlanks();
    const char = chars[i];
    if (char === undefined || char === "\n" || char === "#") break;
    if (char === ";" || char === "&") {
      if (words.length === 0) return undefined;
      i++;
      skipBlanks();
      break;
    }
    const start = i;
    let word = "";
    for (;;) {
      const c = chars[i];
      if (c === undefined) break;
      if (c === "'") {
        const end = chars.indexOf("'", i + 1);
        if (end < 0) return undefined;
        word += chars.slice(i + 1, end).join("");
        i = end + 1;
      } else if (c === '"') {
        const string = doubleQuoted(chars, i + 1);
        if (string === undefined) return undefined;
        word += string.value;
        i = string.next;
      } else if (c === "\\") {
        const quoted = chars[i + 1];
        if (quoted === undefined || !ESCAPABLE.test(quoted)) return undefined;
        word += quoted;
        i += 2;
      } else if (c === "{" && chars[i + 1] === "}") {
        word += "{}";
        i += 2;
      } else if (PLAIN.test(c) || (c === "#" && i > start)) {
        word += c;
        i++;
      } else break;
    }
    // A word ends at a blank, a line break, `;`, `&` or the end; anything else is an operator or an expansion.
    const after = chars[i];
    if (i === start || !(after === undefined || after === "\n" || after === ";" || after === "&" || BLANK.has(after))) return undefined;
    words.push(word);
  }
  // Then only a comment (to the end of its line) and blank lines.
  if (chars[i] === "#") while (i < chars.length && chars[i] !== "\n") i++;
  if (chars.slice(i).some((c) => c !== "\n" && !BLANK.has(c))) return undefined;
  return words.length > 0 ? words : undefined;
}

/** The value of a "…" string opened before `from`: no $ or ` in it (expansions), no line continuation. */
function doubleQuoted(chars: readonly string[], from: number): { value: string; next: number } | undefined {
  let value = "";
  for (let i = from; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '"') return { value, next: i + 1 };
    if (c === "$" || c === "`") return undefined;
    if (c === "\\") {
      const quoted = chars[i + 1];
      if (quoted === undefined || quoted === "\n") return undefined;
      if (DOUBLE_QUOTE_ESCAPES.has(quoted)) {
        value += quoted;
        i++;
        continue;
      }
    }
    value += c;
  }
  return undefined;
}
