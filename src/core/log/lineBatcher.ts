/**
 * Gathers log lines and hands them to `write` in batches, in order. On a busy proxy a write per
 * request (each one waking the supervisor that reads the pipe) costs more than the request itself,
 * so writes are at most one per `intervalMs`: the first line after a quiet spell goes out on the
 * next event-loop turn, later ones wait for the interval to pass. A warning or an error is not held
 * back: it goes out on the next turn with everything before it. `flush()` writes what is held at
 * once (the process exits).
 * Lines are held as UTF-8 in one reused buffer: a string built by appending every line kept each
 * one alive until the write and made a large string to encode there, and cost a busy proxy about
 * 3 % of its CPU per request at c=32 (bench/compare.ts, four runs: ×0.973, ×0.944, ×0.988, ×0.962).
 */
export interface LineBatcherOptions {
  /** Gets a view of the batcher's buffer, valid during the call only: what keeps the bytes copies them. */
  write: (bytes: Uint8Array) => void;
  intervalMs: number;
  now?: () => number;
  /** Runs `fn` on the next turn (setImmediate); injectable for tests. */
  soon?: (fn: () => void) => void;
  /** Runs `fn` after `ms` (an unref'd timer, so a pending batch never keeps the process alive). */
  later?: (fn: () => void, ms: number) => void;
}

/** The buffer's first size; one a burst of long lines grew past BUFFER_KEEP is let go after its write. */
const BUFFER_START = 64 * 1024;
const BUFFER_KEEP = 1024 * 1024;

const NEWLINE = 0x0a;

export class LineBatcher {
  #buffer = Buffer.allocUnsafe(0);
  #length = 0;
  #lastWriteAt = Number.NEGATIVE_INFINITY;
  /** A flush is scheduled: "soon" (next turn) or "later" (after the interval). */
  #scheduled: "soon" | "later" | undefined;
  readonly #now: () => number;
  readonly #soon: (fn: () => void) => void;
  readonly #later: (fn: () => void, ms: number) => void;

  constructor(private readonly options: LineBatcherOptions) {
    this.#now = options.now ?? performance.now.bind(performance);
    this.#soon = options.soon ?? ((fn) => setImmediate(fn));
    this.#later = options.later ?? ((fn, ms) => setTimeout(fn, ms).unref());
  }

  /** Holds one line (without its newline); `urgent` lines go out on the next turn. */
  add(line: string, urgent = false): void {
    // A UTF-16 unit takes at most 3 bytes in UTF-8: room for that is room for the line, without measuring it first.
    const room = this.#length + line.length * 3 + 1;
    if (room > this.#buffer.length) this.#grow(room);
    this.#length += this.#buffer.write(line, this.#length);
    this.#buffer[this.#length++] = NEWLINE;
    if (this.#scheduled === "soon") return;
    const wait = this.#lastWriteAt + this.options.intervalMs - this.#now();
    if (urgent || wait <= 0) {
      this.#scheduled = "soon";
      this.#soon(() => this.#scheduledFlush("soon"));
    } else if (this.#scheduled === undefined) {
      this.#scheduled = "later";
      this.#later(() => this.#scheduledFlush("later"), wait);
    }
  }

  /** Writes every held line now. */
  flush(): void {
    if (this.#length === 0) return;
    const bytes = this.#buffer.subarray(0, this.#length);
    this.#length = 0;
    this.#lastWriteAt = this.#now();
    this.options.write(bytes);
    if (this.#buffer.length > BUFFER_KEEP) this.#buffer = Buffer.allocUnsafe(0);
  }

  #grow(room: number): void {
    const next = Buffer.allocUnsafe(Math.max(BUFFER_START, this.#buffer.length * 2, room));
    this.#buffer.copy(next, 0, 0, this.#length);
    this.#buffer = next;
  }

  // A timer overtaken by an urgent flush finds its lines gone and only clears its mark if still its own.
  #scheduledFlush(kind: "soon" | "later"): void {
    if (this.#scheduled === kind) this.#scheduled = undefined;
    this.flush();
  }
}
