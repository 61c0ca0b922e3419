export interface RestartPolicyOptions {
  /** Restarts allowed within the window before giving up (crash loop). */
  maxRestarts: number;
  windowMs: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** A worker that stayed up this long resets the backoff to "restart at once". */
  healthyResetMs: number;
  /** 0..1: spreads restarts so several hosts do not retry in lockstep. */
  jitter?: number;
  random?: () => number;
}

export type RestartDecision = { action: "restart"; delayMs: number; attempt: number } | { action: "give_up"; restartsInWindow: number };

/**
 * Decides what to do when the worker exits: the first restart is immediate, the next ones back
 * off exponentially; past maxRestarts within the window the supervisor gives up. Pure: time is passed in.
 */
export class RestartPolicy {
  #restarts: number[] = [];
  #consecutive = 0;

  constructor(private readonly options: RestartPolicyOptions) {}

  onExit(now: number, startedAt: number): RestartDecision {
    const { maxRestarts, windowMs, initialBackoffMs, maxBackoffMs, healthyResetMs } = this.options;
    if (now - startedAt >= healthyResetMs) this.#consecutive = 0;
    this.#restarts = this.#restarts.filter((t) => now - t < windowMs);
    if (this.#restarts.length >= maxRestarts) return { action: "give_up", restartsInWindow: this.#restarts.length };
    this.#restarts.push(now);
    const attempt = ++this.#consecutive;
    const base = attempt === 1 ? 0 : Math.min(maxBackoffMs, initialBackoffMs * 2 ** (attempt - 2));
    const jitter = this.options.jitter ?? 0.2;
    const random = this.options.random ?? Math.random;
    const delayMs = Math.round(base * (1 - jitter + 2 * jitter * random()));
    return { action: "restart", delayMs, attempt };
  }

  get restartsInWindow(): number {
    return this.#restarts.length;
  }
}
