/**
 * Gathers log lines and hands them to `write` in batches, in order. On a busy proxy a write per
 * request (each one waking the supervisor that reads the pipe) costs more than the request itself,
 * so writes are at most one per `intervalMs`: the first line after a quiet spell goes out on the
 * next event-loop turn, later ones wait for the interval to pass. A warning or an error is not held
 * back: it goes out on the next turn with everything before it. `flush()` writes what is held at
 * once (the process exits).
 */
export interface LineBatcherOptions {
  write: (text: string) => void;
  intervalMs: number;
  now?: () => number;
  /** Runs `fn` on the next turn (setImmediate); injectable for tests. */
  soon?: (fn: () => void) => void;
  /** Runs `fn` after `ms` (an unref'd timer, so a pending batch never keeps the process alive). */
  later?: (fn: () => void, ms: number) => void;
}

export class LineBatcher {
  #pending = "";
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
    this.#pending += `${line}\n`;
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
    if (this.#pending === "") return;
    const text = this.#pending;
    this.#pending = "";
    this.#lastWriteAt = this.#now();
    this.options.write(text);
  }

  // A timer overtaken by an urgent flush finds its lines gone and only clears its mark if still its own.
  #scheduledFlush(kind: "soon" | "later"): void {
    if (this.#scheduled === kind) this.#scheduled = undefined;
    this.flush();
  }
}
