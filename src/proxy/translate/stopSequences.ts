/**
 * Chat `stop` honoured by the proxy for upstreams that have no such parameter (the Responses API):
 * the text ends before the first stop sequence, which is never shown.
 */

/** The text up to the first stop sequence, and whether one was found. */
export function cutAtStop(text: string, stops: readonly string[]): { text: string; cut: boolean } {
  const at = firstStop(text, stops);
  return at < 0 ? { text, cut: false } : { text: text.slice(0, at), cut: true };
}

function firstStop(text: string, stops: readonly string[]): number {
  let first = -1;
  for (const stop of stops) {
    const at = text.indexOf(stop);
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  return first;
}

/**
 * The streamed form: holds back the tail of the text that could still grow into a stop sequence,
 * so a sequence split across deltas is caught and no part of it reaches the client.
 */
export class StopCutter {
  #held = "";
  readonly #longest: number;

  constructor(private readonly stops: readonly string[]) {
    this.#longest = Math.max(0, ...stops.map((stop) => stop.length));
  }

  /** The text that may be sent now; `stopped` once a stop sequence was met (nothing after it is sent). */
  push(delta: string): { text: string; stopped: boolean } {
    const buffer = this.#held + delta;
    const at = firstStop(buffer, this.stops);
    if (at >= 0) {
      this.#held = "";
      return { text: buffer.slice(0, at), stopped: true };
    }
    const keep = this.#heldBack(buffer);
    this.#held = buffer.slice(buffer.length - keep);
    return { text: buffer.slice(0, buffer.length - keep), stopped: false };
  }

  /** What was held back, once the text ended without completing a stop sequence. */
  flush(): string {
    const held = this.#held;
    this.#held = "";
    return held;
  }

  #heldBack(buffer: string): number {
    for (let k = Math.min(this.#longest - 1, buffer.length); k > 0; k--) {
      const tail = buffer.slice(buffer.length - k);
      if (this.stops.some((stop) => stop.startsWith(tail))) return k;
    }
    return 0;
  }
}
