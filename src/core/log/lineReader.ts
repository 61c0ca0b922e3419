export interface LineReadOptions {
  /** A line longer than this is cut there (1 MiB by default). */
  maxLineBytes?: number;
  /** Told what a handler threw; reading goes on. Without it, what a handler throws ends the read. */
  onError?: (error: unknown) => void;
}

/**
 * Calls onLine for each complete line of a byte stream (a child's stdout), without its LF or a CR
 * before it. A line longer than maxLineBytes is cut there, so a child that never writes a newline
 * cannot grow memory. A handler that throws (a full disk under the log file) is reported to onError
 * and reading goes on: stopping would close the child's pipe and break every write it makes afterwards.
 */
export function readLines(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
  options: LineReadOptions = {},
): Promise<void> {
  // One decoder for the stream: a byte order mark is dropped at its start only, as a stream's text has it.
  const decoder = new TextDecoder();
  return readLineBlocks(stream, (block) => eachLine(decoder.decode(block, { stream: true }), onLine, options.onError), {
    maxLineBytes: options.maxLineBytes,
  });
}

/**
 * Calls onBlock with the whole lines of each read of a byte stream (a child's stdout) as bytes,
 * each line ended by LF, the way they came: a reader that keeps them (a log file) writes them
 * without decoding and encoding them again (a CR before an LF stays), and one that reads them decodes
 * a block at once (eachLine). A line longer than maxLineBytes is cut there, where a character begins,
 * and a last line without its LF gets one at the end.
 * Handlers that throw are reported to onError as readLines' are.
 */
export async function readLineBlocks(
  stream: ReadableStream<Uint8Array>,
  onBlock: (block: Uint8Array) => void,
  options: LineReadOptions = {},
): Promise<void> {
  const maxLineBytes = options.maxLineBytes ?? 1 << 20;
  const emit = reporting(onBlock, options.onError);
  // A line begun in earlier reads, not yet ended.
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  for await (const chunk of stream) {
    const last = chunk.lastIndexOf(LF);
    if (last < 0) {
      pending.push(chunk);
      pendingBytes += chunk.length;
    } else {
      const lines = chunk.subarray(0, last + 1);
      emit(pendingBytes === 0 ? lines : Buffer.concat([...pending, lines]));
      // Copied: the rest is small (one line's start), and the read's buffer can then go.
      const rest = chunk.subarray(last + 1);
      pending = rest.length > 0 ? [rest.slice()] : [];
      pendingBytes = rest.length;
    }
    if (pendingBytes > maxLineBytes) {
      // Cut where a character begins: a character split by the cut would be garbled on both sides.
      const line = Buffer.concat(pending);
      const cut = characterStart(line);
      emit(ended([line.subarray(0, cut)]));
      pending = cut < line.length ? [line.subarray(cut)] : [];
      pendingBytes = line.length - cut;
    }
  }
  if (pendingBytes > 0) emit(ended(pending));
}

/**
 * Calls onLine for each line of a block's text (readLineBlocks'), without its LF or a CR before it.
 * A handler that throws costs its own line only, reported to onError, as in readLines.
 */
export function eachLine(text: string, onLine: (line: string) => void, onError?: (error: unknown) => void): void {
  const emit = reporting(onLine, onError);
  for (let start = 0; start < text.length; ) {
    const newline = text.indexOf("\n", start);
    const end = newline < 0 ? text.length : newline;
    emit(lineBetween(text, start, end));
    start = end + 1;
  }
}

/** The line of `text` from `start` to `end` (where its LF is), without a CR before the LF. */
export function lineBetween(text: string, start: number, end: number): string {
  return text.charCodeAt(end - 1) === CR && end > start ? text.slice(start, end - 1) : text.slice(start, end);
}

/** `handle`, with what it throws reported to onError when there is one (reading goes on), else thrown. */
function reporting<T>(handle: (value: T) => void, onError: ((error: unknown) => void) | undefined): (value: T) => void {
  return (value) => {
    try {
      handle(value);
    } catch (error) {
      if (!onError) throw error;
      onError(error);
    }
  };
}

const LF = 0x0a;
const CR = 0x0d;
const NEWLINE = new Uint8Array([LF]);

function ended(pieces: Uint8Array[]): Uint8Array {
  return Buffer.concat([...pieces, NEWLINE]);
}

/** Where the UTF-8 character the bytes end in begins, when they end before it does; else their length. */
function characterStart(bytes: Uint8Array): number {
  let at = bytes.length;
  // Continuation bytes (10xxxxxx) back to the character's first byte, three at most.
  while (at > 0 && bytes.length - at < 3 && (bytes[at - 1]! & 0xc0) === 0x80) at--;
  const first = bytes[at - 1];
  if (first === undefined || first < 0xc0) return bytes.length;
  const size = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : 2;
  return bytes.length - (at - 1) < size ? at - 1 : bytes.length;
}
