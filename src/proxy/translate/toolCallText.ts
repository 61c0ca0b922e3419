/**
 * Tool calls some open models write inside their text — `<tool_call>{json}</tool_call>` or a
 * fenced JSON block with `name` and `arguments` — read incrementally from streamed text. Only
 * a block that parses as such a call becomes one; anything else stays text, unchanged: the
 * proxy never invents a call from prose.
 */

export interface TextToolCall {
  name: string;
  /** JSON text of the arguments object. */
  arguments: string;
}

export interface ScanOutput {
  text: string;
  calls: TextToolCall[];
}

const TAG_OPEN = "<tool_call>";
const TAG_CLOSE = "</tool_call>";
const FENCE = "```";
/** A block that never closes is released as text past this size, so the buffer stays bounded. */
const MAX_BLOCK = 256 * 1024;
const NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

type State = "text" | "tag" | "fence";

export class ToolCallTextScanner {
  #state: State = "text";
  #buffer = "";

  push(delta: string): ScanOutput {
    this.#buffer += delta;
    const out: ScanOutput = { text: "", calls: [] };
    for (;;) {
      if (this.#state === "text") {
        const tag = this.#buffer.indexOf(TAG_OPEN);
        const fence = this.#buffer.indexOf(FENCE);
        const at = tag === -1 ? fence : fence === -1 ? tag : Math.min(tag, fence);
        if (at === -1) {
          const keep = partialMarkerLength(this.#buffer);
          out.text += this.#buffer.slice(0, this.#buffer.length - keep);
          this.#buffer = this.#buffer.slice(this.#buffer.length - keep);
          return out;
        }
        out.text += this.#buffer.slice(0, at);
        const isTag = at === tag;
        this.#buffer = this.#buffer.slice(at + (isTag ? TAG_OPEN.length : FENCE.length));
        this.#state = isTag ? "tag" : "fence";
        continue;
      }
      const close = this.#buffer.indexOf(this.#state === "tag" ? TAG_CLOSE : FENCE);
      if (close === -1) {
        if (this.#buffer.length > MAX_BLOCK) {
          out.text += this.#opener() + this.#buffer;
          this.#buffer = "";
          this.#state = "text";
        }
        return out;
      }
      const content = this.#buffer.slice(0, close);
      const closer = this.#state === "tag" ? TAG_CLOSE : FENCE;
      this.#buffer = this.#buffer.slice(close + closer.length);
      const calls = this.#state === "tag" ? parseCalls(content) : parseCalls(stripFenceInfo(content));
      if (calls) out.calls.push(...calls);
      else out.text += this.#opener() + content + closer;
      this.#state = "text";
    }
  }

  /** Releases whatever is held; an unclosed block is text. */
  end(): ScanOutput {
    const text = (this.#state === "text" ? "" : this.#opener()) + this.#buffer;
    this.#buffer = "";
    this.#state = "text";
    return { text, calls: [] };
  }

  #opener(): string {
    return this.#state === "tag" ? TAG_OPEN : FENCE;
  }
}

/** Parses a whole text at once. */
export function parseToolCallText(text: string): ScanOutput {
  const scanner = new ToolCallTextScanner();
  const first = scanner.push(text);
  const rest = scanner.end();
  return { text: first.text + rest.text, calls: first.calls };
}

/** Length of the longest suffix of `text` that could be the start of a marker. */
function partialMarkerLength(text: string): number {
  for (let keep = Math.min(text.length, TAG_OPEN.length - 1); keep > 0; keep--) {
    const suffix = text.slice(text.length - keep);
    if (TAG_OPEN.startsWith(suffix) || FENCE.startsWith(suffix)) return keep;
  }
  return 0;
}

/** Drops a fence's info string ("json", "tool_call") on its first line. */
function stripFenceInfo(content: string): string {
  const newline = content.indexOf("\n");
  if (newline === -1) return content;
  const info = content.slice(0, newline).trim();
  return /^[A-Za-z0-9_-]*$/.test(info) ? content.slice(newline + 1) : content;
}

function parseCalls(content: string): TextToolCall[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(content.trim());
  } catch {
    return undefined;
  }
  const items = Array.isArray(value) ? value : [value];
  const calls: TextToolCall[] = [];
  for (const item of items) {
    const call = toCall(item);
    if (!call) return undefined;
    calls.push(call);
  }
  return calls.length > 0 ? calls : undefined;
}

function toCall(item: unknown): TextToolCall | undefined {
  if (typeof item !== "object" || item === null) return undefined;
  const record = item as Record<string, unknown>;
  if (typeof record.name !== "string" || !NAME.test(record.name)) return undefined;
  const args = record.arguments ?? record.parameters;
  if (typeof args === "string") {
    try {
      const parsed = JSON.parse(args) as unknown;
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
    } catch {
      return undefined;
    }
    return { name: record.name, arguments: args };
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return undefined;
  return { name: record.name, arguments: JSON.stringify(args) };
}
