/**
 * The streamed text of one model step, written as few `text.delta` events (one SQLite row each) as
 * a live reader allows: deltas are joined until `maxDelayMs` passed since the first one waiting, or
 * `maxChars` gathered, or the step ends. A fast step is one row; a slow stream still shows its text
 * within `maxDelayMs`.
 */
export class DeltaBatch {
  #text = "";
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** A write that failed on the timer: the turn's own code path rethrows it at its next call. */
  #failed: unknown;

  constructor(
    private readonly write: (text: string) => void,
    private readonly maxDelayMs = 200,
    private readonly maxChars = 4096,
  ) {}

  add(delta: string): void {
    this.#throwIfFailed();
    this.#text += delta;
    if (this.#text.length >= this.maxChars) this.flush();
    else
      this.#timer ??= setTimeout(() => {
        try {
          this.flush();
        } catch (error) {
          this.#failed = error;
        }
      }, this.maxDelayMs);
  }

  /** Writes what waits now (the step ended, or was cut off: what arrived is kept). */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#throwIfFailed();
    if (this.#text === "") return;
    const text = this.#text;
    this.#text = "";
    this.write(text);
  }

  #throwIfFailed(): void {
    if (this.#failed === undefined) return;
    const failed = this.#failed;
    this.#failed = undefined;
    throw failed;
  }
}
