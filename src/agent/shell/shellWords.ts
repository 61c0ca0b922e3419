import type { Node } from "web-tree-sitter";

/**
 * The value bash gives a word when nothing in it is expanded: quotes and backslashes removed.
 * Undefined when the word is not a literal — a parameter or command substitution, arithmetic,
 * `$'…'`, `$"…"`, a glob (`*`, `?`, `[`) or a brace expansion — since only run time says what it is.
 */
export function literalValue(node: Node): string | undefined {
  switch (node.type) {
    case "word":
      return unquotedWord(node.text);
    case "number":
      return node.text;
    case "raw_string":
      return node.text.slice(1, -1);
    case "string":
      return node.namedChildren.every((child) => child?.type === "string_content")
        ? node.text.slice(1, -1).replace(/\\([$`"\\\n])/g, (_, ch: string) => (ch === "\n" ? "" : ch))
        : undefined;
    case "concatenation": {
      // `{}` (find -exec's placeholder) is two words to the grammar; other braces are expansions.
      if (node.text === "{}") return "{}";
      // A part the grammar leaves unnamed (the `$` of `a$`, which bash keeps) would be lost.
      if (node.namedChildren.map((child) => child?.text ?? "").join("") !== node.text) return undefined;
      let value = "";
      for (const child of node.namedChildren) {
        if (!child || (child.type === "word" && /[{}]/.test(child.text))) return undefined;
        const part = literalValue(child);
        if (part === undefined) return undefined;
        value += part;
      }
      return value;
    }
    default:
      return undefined;
  }
}

/** A bare word's value; undefined when it holds an unescaped glob or brace-expansion character. */
function unquotedWord(text: string): string | undefined {
  let value = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\\") {
      i++;
      if (i < text.length && text[i] !== "\n") value += text[i];
      continue;
    }
    if (ch === "*" || ch === "?" || ch === "[") return undefined;
    if (ch === "{" && /[,]|\.\./.test(text.slice(i)) && text.indexOf("}", i) > i) return undefined;
    value += ch;
  }
  return value;
}

/** The last path component: /usr/bin/sudo → sudo. */
export function programName(value: string): string {
  return value.slice(value.lastIndexOf("/") + 1);
}
