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
