import type { ParsedCall } from "./types.ts";

/**
 * Reads one JSON value starting at `from` (after whitespace) and says where it ends, so a format
 * can take a value that has text after it. Brackets are matched outside strings, then the slice
 * is parsed by JSON.parse: nothing is accepted that JSON.parse would refuse.
 */
export function readJsonValue(text: string, from = 0): { value: unknown; end: number } | undefined {
  let start = from;
  while (start < text.length && /\s/.test(text[start]!)) start++;
  const first = text[start];
  if (first !== "{" && first !== "[") return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") depth++;
    else if (ch === "}" || ch === "]") {
      depth--;
      if (depth === 0) {
        try {
          return { value: JSON.parse(text.slice(start, i + 1)), end: i + 1 };
        } catch {
          return undefined;
        }
      }
    }
  }
  return undefined;
}

/** Parses text that must be exactly one JSON object (whitespace around it allowed). */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
/** Keys a JSON-written call may have besides its name and arguments. */
const CALL_KEYS = new Set(["name", "arguments", "parameters", "id", "type"]);

/**
 * `{"name": …, "arguments"|"parameters": {…} | "{…}"}`, or a list of them. Any other key, a name
 * that is not a plain identifier or arguments that are not an object make the whole value "not a
 * call": a JSON answer that merely has a `name` field is left alone.
 */
export function callsFromJson(value: unknown): ParsedCall[] | undefined {
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return undefined;
  const calls: ParsedCall[] = [];
  for (const item of items) {
    const call = callFromObject(item);
    if (!call) return undefined;
    calls.push(call);
  }
  return calls;
}

function callFromObject(item: unknown): ParsedCall | undefined {
  if (!isObject(item)) return undefined;
  if (typeof item.name !== "string" || !NAME.test(item.name)) return undefined;
  if (Object.keys(item).some((key) => !CALL_KEYS.has(key))) return undefined;
  const args = item.arguments ?? item.parameters ?? {};
  return argumentsText(item.name, args);
}

/** Arguments given as an object, or as a string holding one's JSON. */
export function argumentsText(name: string, args: unknown): ParsedCall | undefined {
  if (isObject(args)) return { name, arguments: JSON.stringify(args) };
  if (typeof args === "string") {
    // Arguments encoded twice stay as written here; the repair step unwraps them and says so.
    try {
      const parsed = JSON.parse(args) as unknown;
      if (isObject(parsed) || typeof parsed === "string") return { name, arguments: args };
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Calls in `text` that must be JSON values only, separated by whitespace or `;` (Llama 3's parallel form). */
export function callsFromJsonSequence(text: string): ParsedCall[] | undefined {
  const calls: ParsedCall[] = [];
  let at = 0;
  for (;;) {
    while (at < text.length && /[\s;]/.test(text[at]!)) at++;
    if (at >= text.length) return calls.length > 0 ? calls : undefined;
    const read = readJsonValue(text, at);
    if (!read) return undefined;
    const found = callsFromJson(read.value);
    if (!found) return undefined;
    calls.push(...found);
    at = read.end;
  }
}
