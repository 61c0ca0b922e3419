/**
 * Calls onLine for each complete line of a byte stream (a child's stdout). A line longer than
 * maxLineBytes is cut there, so a child that never writes a newline cannot grow memory. A handler
 * that throws (a full disk under the log file) is reported to onError and reading goes on: stopping
 * would close the child's pipe and break every write it makes afterwards.
 */
export async function readLines(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
  options: { maxLineBytes?: number; onError?: (error: unknown) => void } = {},
): Promise<void> {
  const maxLineBytes = options.maxLineBytes ?? 1 << 20;
  const emit = (line: string) => {
    try {
      onLine(line);
    } catch (error) {
      if (!options.onError) throw error;
      options.onError(error);
    }
  };
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) emit(line.endsWith("\r") ? line.slice(0, -1) : line);
    if (pending.length > maxLineBytes) {
      emit(pending);
      pending = "";
    }
  }
  pending += decoder.decode();
  if (pending) emit(pending);
}

/**
 * Calls onBlock with the whole lines of each read of a byte stream (a child's stdout) as bytes,
 * each line ended by LF, the way they came: a reader that keeps them (a log file) writes them
 * without decoding and encoding them again, and one that reads them decodes a block at once. A line
 * longer than maxLineBytes is cut there, and a last line without its LF gets one at the end.
 * Handlers that throw are reported to onError as readLines' are.
 */
export async function readLineBlocks(
  stream: ReadableStream<Uint8Array>,
  onBlock: (block: Uint8Array) => void,
  options: { maxLineBytes?: number; onError?: (error: unknown) => void } = {},
): Promise<void> {
  const maxLineBytes = options.maxLineBytes ?? 1 << 20;
  const emit = (block: Uint8Array) => {
    try {
      onBlock(block);
    } catch (error) {
      if (!options.onError) throw error;
      options.onError(error);
    }
  };
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
      emit(ended(pending));
      pending = [];
      pendingBytes = 0;
    }
  }
  if (pendingBytes > 0) emit(ended(pending));
}

const LF = 0x0a;
const NEWLINE = new Uint8Array([LF]);

function ended(pieces: Uint8Array[]): Uint8Array {
  return Buffer.concat([...pieces, NEWLINE]);
}
