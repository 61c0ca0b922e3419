/**
 * Tool calls open models write inside their text, in their family's format (see
 * toolCallFormats/), read incrementally from streamed text. A block becomes calls only when its
 * format parses it and every name in it is a declared tool; anything else stays text, byte for
 * byte: the proxy never invents a call from prose.
 */
import { repairCall, type RepairedCall } from "./toolCallRepair.ts";
import type { BlockFormat, FormatSet, ParsedCall, ToolSchemas } from "./toolCallFormats/index.ts";

export interface TextToolCall extends RepairedCall {
  /** The format family it was written in. */
  family: string;
}

/** Told of each block at a format's own marker that stayed text: an attempted call the client will not see. */
export interface UnparsedSink {
  unparsedBlock(family: string, block: string): void;
}

export interface ScanOutput {
  text: string;
  calls: TextToolCall[];
}

/** A block that never closes is released as text past this size, so the buffer stays bounded. */
const MAX_BLOCK = 256 * 1024;

type State =
  | { kind: "text" }
  | { kind: "block"; open: string; formats: readonly BlockFormat[] }
  /** A block its formats rejected early: text up to and including its closer. */
  | { kind: "verbatim"; close: string }
  | { kind: "whole" };

export class ToolCallTextScanner {
  readonly #formats: FormatSet;
  readonly #tools: ToolSchemas;
  readonly #sink: UnparsedSink | undefined;
  /** Formats by their opening marker, in the order they are tried. */
  readonly #byOpen = new Map<string, BlockFormat[]>();
  readonly #longestOpen: number;
  /** First characters of the markers: a buffer tail without any of them cannot start one. */
  readonly #openFirsts: Set<string>;
  /** How far into the held block closers were already searched for. */
  #searched = 0;
  #state: State = { kind: "text" };
  #buffer = "";
  /** Until text other than whitespace is released, the answer may still be a whole-answer call. */
  #atStart: boolean;

  constructor(formats: FormatSet, tools: ToolSchemas, sink?: UnparsedSink) {
    this.#formats = formats;
    this.#tools = tools;
    this.#sink = sink;
    for (const format of formats.blocks) {
      const list = this.#byOpen.get(format.open) ?? [];
      list.push(format);
      this.#byOpen.set(format.open, list);
    }
    this.#longestOpen = Math.max(0, ...[...this.#byOpen.keys()].map((open) => open.length));
    this.#openFirsts = new Set([...this.#byOpen.keys()].map((open) => open[0]!));
    this.#atStart = formats.whole.length > 0;
  }

  push(delta: string): ScanOutput {
    this.#buffer += delta;
    const out: ScanOutput = { text: "", calls: [] };
    for (;;) {
      const state = this.#state;
      if (state.kind === "whole") {
        if (this.#buffer.length <= MAX_BLOCK) return out;
        // Too long to be a call: scanned as ordinary text from here.
        this.#atStart = false;
        this.#state = { kind: "text" };
        continue;
      }
      if (state.kind === "text") {
        if (this.#atStart && this.#startsWhole()) {
          this.#state = { kind: "whole" };
          return out;
        }
        if (this.#atStart && this.#buffer.trim() === "") return out;
        const found = this.#firstOpen();
        if (!found) {
          const keep = this.#partialOpenLength();
          this.#emit(out, this.#buffer.slice(0, this.#buffer.length - keep));
          this.#buffer = this.#buffer.slice(this.#buffer.length - keep);
          return out;
        }
        this.#emit(out, this.#buffer.slice(0, found.at));
        this.#buffer = this.#buffer.slice(found.at + found.open.length);
        this.#state = { kind: "block", open: found.open, formats: this.#byOpen.get(found.open)! };
        this.#searched = 0;
        continue;
      }
      if (state.kind === "verbatim") {
        const at = this.#buffer.indexOf(state.close);
        if (at === -1) {
          const keep = partialLength(this.#buffer, [state.close]);
          this.#emit(out, this.#buffer.slice(0, this.#buffer.length - keep));
          this.#buffer = this.#buffer.slice(this.#buffer.length - keep);
          return out;
        }
        this.#emit(out, this.#buffer.slice(0, at + state.close.length));
        this.#buffer = this.#buffer.slice(at + state.close.length);
        this.#state = { kind: "text" };
        continue;
      }
      const closers = closersOf(state.formats);
      const close = firstOf(this.#buffer, closers, this.#searched);
      if (!close && closers.length === 1 && state.formats.every((format) => format.rejects?.(this.#buffer))) {
        this.#emit(out, state.open);
        this.#state = { kind: "verbatim", close: closers[0]! };
        continue;
      }
      if (!close) {
        // A closer split across deltas starts at most its length back from the end.
        this.#searched = Math.max(0, this.#buffer.length - Math.max(0, ...closers.map((c) => c.length)) + 1);
        if (this.#buffer.length > MAX_BLOCK) {
          this.#noteUnparsed(state.formats, state.open, this.#buffer, "");
          this.#emit(out, state.open + this.#buffer);
          this.#buffer = "";
          this.#state = { kind: "text" };
        }
        return out;
      }
      const content = this.#buffer.slice(0, close.at);
      this.#buffer = this.#buffer.slice(close.at + close.open.length);
      this.#state = { kind: "text" };
      // Text a format leaves after its calls may hold further blocks: it is scanned again.
      this.#buffer = this.#block(out, state, content, close.open) + this.#buffer;
    }
  }

  /** Releases whatever is held: an unclosed final block counts (the model stopped there). */
  end(): ScanOutput {
    const out: ScanOutput = { text: "", calls: [] };
    const state = this.#state;
    const held = this.#buffer;
    this.#buffer = "";
    this.#state = { kind: "text" };
    if (state.kind === "block") {
      const after = this.#block(out, state, held, "");
      if (after) merge(out, this.push(after), this.end());
    } else if (state.kind === "verbatim") out.text += held;
    else if (state.kind === "whole") {
      const calls = this.#wholeCalls(held);
      this.#atStart = false;
      if (calls) out.calls.push(...calls);
      else {
        // Not a whole-answer call: the same text may still hold marked blocks.
        merge(out, this.push(held), this.end());
      }
    } else out.text += held;
    return out;
  }

  /** Takes a block's calls, or releases it as text; returns the text its format left after the calls. */
  #block(out: ScanOutput, state: Extract<State, { kind: "block" }>, content: string, closer: string): string {
    for (const format of state.formats) {
      const parsed = format.parse(content, this.#tools);
      const calls = parsed && this.#declared(parsed.calls, format.family);
      if (!parsed || !calls) continue;
      out.calls.push(...calls);
      return parsed.after ?? "";
    }
    this.#noteUnparsed(state.formats, state.open, content, closer);
    this.#emit(out, state.open + content + closer);
    return "";
  }

  /** A block its formats did not take counts as a failed call only when each says it was meant as one. */
  #noteUnparsed(formats: readonly BlockFormat[], open: string, content: string, closer: string): void {
    if (this.#sink && formats.every((format) => format.meantAsCall?.(content) ?? true))
      this.#sink.unparsedBlock(formats[0]!.family, open + content + closer);
  }

  #wholeCalls(answer: string): TextToolCall[] | undefined {
    for (const format of this.#formats.whole) {
      const parsed = format.parse(answer, this.#tools);
      const calls = parsed && this.#declared(parsed, format.family);
      if (calls) return calls;
    }
    return undefined;
  }

  /** The calls with their names resolved and arguments repaired, or undefined if any is not a declared tool's. */
  #declared(calls: readonly ParsedCall[], family: string): TextToolCall[] | undefined {
    const out: TextToolCall[] = [];
    for (const call of calls) {
      const repaired = repairCall(call, this.#tools);
      if (!repaired) return undefined;
      out.push({ ...repaired, family });
    }
    return out.length > 0 ? out : undefined;
  }

  #emit(out: ScanOutput, text: string): void {
    if (text === "") return;
    out.text += text;
    if (this.#atStart && text.trim() !== "") this.#atStart = false;
  }

  /** Whether the answer so far starts like a whole-answer format and cannot be a marker. */
  #startsWhole(): boolean {
    const trimmed = this.#buffer.trimStart();
    if (trimmed === "") return false;
    if (!this.#formats.whole.some((format) => format.startsWith.includes(trimmed[0]!))) return false;
    for (const open of this.#byOpen.keys()) if (open.startsWith(trimmed.slice(0, open.length)) || trimmed.startsWith(open)) return false;
    return true;
  }

  #firstOpen(): { at: number; open: string } | undefined {
    return firstOf(this.#buffer, this.#byOpen.keys());
  }

  /** Length of the longest suffix of the buffer that could be the start of a marker. */
  #partialOpenLength(): number {
    const tail = this.#buffer.slice(-(this.#longestOpen - 1));
    if (![...tail].some((ch) => this.#openFirsts.has(ch))) return 0;
    return partialLength(this.#buffer, [...this.#byOpen.keys()]);
  }
}

/** Length of the longest suffix of `text` that is the start of one of `markers`. */
function partialLength(text: string, markers: readonly string[]): number {
  const longest = Math.max(0, ...markers.map((marker) => marker.length));
  for (let keep = Math.min(text.length, longest - 1); keep > 0; keep--) {
    const suffix = text.slice(text.length - keep);
    for (const marker of markers) if (marker.startsWith(suffix)) return keep;
  }
  return 0;
}

function merge(out: ScanOutput, ...more: ScanOutput[]): void {
  for (const part of more) {
    out.text += part.text;
    out.calls.push(...part.calls);
  }
}

function closersOf(formats: readonly BlockFormat[]): string[] {
  return [...new Set(formats.flatMap((format) => format.close))];
}

function firstOf(text: string, markers: Iterable<string>, from = 0): { at: number; open: string } | undefined {
  let best: { at: number; open: string } | undefined;
  for (const marker of markers) {
    const at = text.indexOf(marker, from);
    if (at !== -1 && (!best || at < best.at || (at === best.at && marker.length > best.open.length))) best = { at, open: marker };
  }
  return best;
}

/** Parses a whole text at once. */
export function parseToolCallText(text: string, formats: FormatSet, tools: ToolSchemas, sink?: UnparsedSink): ScanOutput {
  const scanner = new ToolCallTextScanner(formats, tools, sink);
  const first = scanner.push(text);
  const rest = scanner.end();
  return { text: first.text + rest.text, calls: [...first.calls, ...rest.calls] };
}
