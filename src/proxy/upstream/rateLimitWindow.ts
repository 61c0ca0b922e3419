/** When a 429 names no wait: short enough to be harmless, long enough not to hammer. */
export const DEFAULT_RATE_LIMIT_WAIT_MS = 1000;

/**
 * How long a provider asked to be left alone after its last 429, per upstream model (providers
 * limit each model apart). A rate limit is not ill health, so it never opens the breaker; instead
 * the provider is skipped for that model until the wait is over, and a request that finds every
 * provider waiting is answered 429 at once with the soonest wait.
 */
export class RateLimitWindow {
  readonly #until = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A 429 arrived for `model`; `retryAfterMs` is the wait it named, if any (the latest word counts). */
  limited(model: string, retryAfterMs: number | undefined): void {
    this.#until.set(model, this.now() + (retryAfterMs ?? DEFAULT_RATE_LIMIT_WAIT_MS));
  }

  /** Milliseconds still to wait before asking for `model` again; 0 when it may be asked. */
  remainingMs(model: string): number {
    const until = this.#until.get(model);
    if (until === undefined) return 0;
    const left = until - this.now();
    if (left > 0) return left;
    this.#until.delete(model);
    return 0;
  }

  /** An answer for `model` proves its limit lifted. */
  clear(model: string): void {
    this.#until.delete(model);
  }
}

/** OpenAI's 429 for a spent quota or billing limit: waiting seconds will not lift it. */
export function quotaExhausted(body: string | undefined): boolean {
  return body !== undefined && /insufficient_quota|billing_hard_limit|quota/i.test(body);
}
