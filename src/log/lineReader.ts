/**
 * Calls onLine for each complete line of a byte stream (a child's stdout). A line longer than
 * maxLineBytes is cut there, so a child that never writes a newline cannot grow memory.
 */
export async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void, maxLineBytes = 1 << 20): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = pending.indexOf("\n")) >= 0) {
      onLine(pending.slice(0, newline).replace(/\r$/, ""));
      pending = pending.slice(newline + 1);
    }
    if (pending.length > maxLineBytes) {
      onLine(pending);
      pending = "";
    }
  }
  pending += decoder.decode();
  if (pending) onLine(pending);
}
