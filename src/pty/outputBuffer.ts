import { completePrefixLength } from "./utf8.ts";

export interface TakenOutput {
  bytes: Uint8Array;
  /** Unread bytes dropped since the previous take, because the buffer was full. */
  droppedBytes: number;
}

/**
 * Unread terminal output of one session, bounded: when a flood exceeds the capacity, the oldest
 * unread bytes are dropped and counted, so memory stays flat however much a program prints.
 */
export class OutputBuffer {
  private chunks: Uint8Array[] = [];
  private size = 0;
  private dropped = 0;
  private total = 0;

  constructor(readonly capacity: number) {}

  /** Bytes ever appended, dropped ones included. */
  get totalBytes(): number {
    return this.total;
  }

  get unreadBytes(): number {
    return this.size;
  }

  /** Copies `bytes` in (the caller reuses its read buffer). */
  append(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.total += bytes.length;
    if (bytes.length >= this.capacity) {
      this.dropped += this.size + bytes.length - this.capacity;
      this.chunks = [bytes.slice(bytes.length - this.capacity)];
      this.size = this.capacity;
      return;
    }
    this.chunks.push(bytes.slice());
    this.size += bytes.length;
    this.dropOverflow();
  }

  /**
   * Removes and returns everything unread. With `holdIncomplete`, a trailing partial UTF-8
   * character stays behind for the next take (the rest of it is probably still in flight).
   */
  take(holdIncomplete: boolean): TakenOutput {
    const bytes = concat(this.chunks, this.size);
    const droppedBytes = this.dropped;
    this.dropped = 0;
    const keep = holdIncomplete ? completePrefixLength(bytes) : bytes.length;
    const rest = bytes.subarray(keep);
    this.chunks = rest.length > 0 ? [rest.slice()] : [];
    this.size = rest.length;
    return { bytes: bytes.subarray(0, keep), droppedBytes };
  }

  private dropOverflow(): void {
    while (this.size > this.capacity) {
      const first = this.chunks[0]!;
      const excess = this.size - this.capacity;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
        this.dropped += first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
        this.dropped += excess;
      }
    }
  }
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
