import type { BlockFormat, ParsedCall, WholeFormat } from "./types.ts";

/**
 * Pythonic calls (Llama 3.2/4, Granite pythonic, ToolACE): `[get_weather(city="Paris", days=3), f()]`,
 * keyword arguments only, values Python literals (strings, numbers, True/False/None, lists,
 * dicts). Anything else (an expression, a positional argument) is not a call.
 */
export function parsePythonicCalls(text: string): ParsedCall[] | undefined {
  const reader = new Reader(text.trim());
  try {
    const calls = reader.callList();
    return reader.done() && calls.length > 0 ? calls : undefined;
  } catch {
    return undefined;
  }
}

/** Llama 4 wraps the list in `<|python_start|>…<|python_end|>`. */
export const llama4Pythonic: BlockFormat = {
  family: "pythonic",
  open: "<|python_start|>",
  close: ["<|python_end|>"],
  parse(content) {
    const calls = parsePythonicCalls(content);
    return calls ? { calls } : undefined;
  },
};

/** Without the wrapper, a pythonic list is recognised only as the whole answer. */
export const pythonicList: WholeFormat = {
  family: "pythonic",
  startsWith: ["["],
  parse: (answer) => parsePythonicCalls(answer),
};

class NotPythonic extends Error {}

const IDENT = /[A-Za-z_][A-Za-z0-9_.]*/y;
const NUMBER = /-?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)/y;
const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0" };

class Reader {
  #at = 0;
  constructor(readonly text: string) {}

  done(): boolean {
    this.#space();
    return this.#at === this.text.length;
  }

  callList(): ParsedCall[] {
    this.#expect("[");
    const calls: ParsedCall[] = [];
    for (;;) {
      this.#space();
      if (this.#peek("]")) break;
      calls.push(this.#call());
      this.#space();
      if (!this.#eat(",")) break;
    }
    this.#expect("]");
    return calls;
  }

  #call(): ParsedCall {
    const name = this.#ident();
    this.#expect("(");
    const args: Record<string, unknown> = {};
    for (;;) {
      this.#space();
      if (this.#peek(")")) break;
      const key = this.#ident();
      this.#expect("=");
      args[key] = this.#value();
      this.#space();
      if (!this.#eat(",")) break;
    }
    this.#expect(")");
    return { name, arguments: JSON.stringify(args) };
  }

  #value(): unknown {
    this.#space();
    const ch = this.text[this.#at];
    if (ch === "'" || ch === '"') return this.#string(ch);
    if (ch === "[") return this.#sequence("[", "]");
    if (ch === "(") return this.#sequence("(", ")");
    if (ch === "{") return this.#dict();
    NUMBER.lastIndex = this.#at;
    const number = NUMBER.exec(this.text);
    if (number) {
      this.#at += number[0].length;
      return Number(number[0]);
    }
    const word = this.#ident();
    if (word === "True" || word === "true") return true;
    if (word === "False" || word === "false") return false;
    if (word === "None" || word === "null") return null;
    throw new NotPythonic();
  }

  #string(quote: string): string {
    this.#at++;
    let out = "";
    while (this.#at < this.text.length) {
      const ch = this.text[this.#at++]!;
      if (ch === quote) return out;
      if (ch === "\\") {
        const next = this.text[this.#at++] ?? "";
        out += ESCAPES[next] ?? `\\${next}`;
      } else out += ch;
    }
    throw new NotPythonic();
  }

  #sequence(open: string, close: string): unknown[] {
    this.#expect(open);
    const items: unknown[] = [];
    for (;;) {
      this.#space();
      if (this.#peek(close)) break;
      items.push(this.#value());
      this.#space();
      if (!this.#eat(",")) break;
    }
    this.#expect(close);
    return items;
  }

  #dict(): Record<string, unknown> {
    this.#expect("{");
    const dict: Record<string, unknown> = {};
    for (;;) {
      this.#space();
      if (this.#peek("}")) break;
      const key = this.#value();
      if (typeof key !== "string" && typeof key !== "number") throw new NotPythonic();
      this.#expect(":");
      dict[String(key)] = this.#value();
      this.#space();
      if (!this.#eat(",")) break;
    }
    this.#expect("}");
    return dict;
  }

  #ident(): string {
    this.#space();
    IDENT.lastIndex = this.#at;
    const match = IDENT.exec(this.text);
    if (!match) throw new NotPythonic();
    this.#at += match[0].length;
    return match[0];
  }

  #space(): void {
    while (this.#at < this.text.length && /\s/.test(this.text[this.#at]!)) this.#at++;
  }

  #peek(token: string): boolean {
    return this.text.startsWith(token, this.#at);
  }

  #eat(token: string): boolean {
    this.#space();
    if (!this.#peek(token)) return false;
    this.#at += token.length;
    return true;
  }

  #expect(token: string): void {
    if (!this.#eat(token)) throw new NotPythonic();
  }
}
