/**
 * How the proxy gives up on one upstream call: a flag and one listener. An AbortController per
 * call, and a listener added to and taken off its signal at each step, cost native calls on every
 * proxied request; the own HTTP/1.1 client needs no more than this. fetch, which wants a real
 * AbortSignal, gets one made on first use and aborted with this.
 */
export class CallAbort {
  #aborted = false;
  #listener: (() => void) | undefined;
  #controller: AbortController | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  /** The one listener, called once on abort: a new one replaces the last, undefined takes it off. */
  listen(listener: (() => void) | undefined): void {
    this.#listener = listener;
  }

  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#controller?.abort();
    const listener = this.#listener;
    this.#listener = undefined;
    listener?.();
  }

  /** An AbortSignal aborted with this call (for fetch); made on first use. */
  signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }
}
