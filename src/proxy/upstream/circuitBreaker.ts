import type { FailureCause } from "./upstreamFailure.ts";

export type BreakerState = "closed" | "open" | "half_open";

export interface BreakerSettings {
  failures: number;
  window_ms: number;
  cooldown_5xx_ms: number;
  cooldown_auth_ms: number;
  cooldown_max_ms: number;
}

export interface BreakerTransition {
  to: BreakerState;
  cause?: FailureCause | "manual";
  cooldownMs?: number;
}

/**
 * What tryAcquire granted: a pass of the closed breaker, or half-open's one probe, numbered so that
 * only that probe frees its slot (a request let through while closed, or an earlier probe, must not).
 */
export type BreakerPass = "closed" | number;

export interface BreakerSnapshot {
  state: BreakerState;
  /** Failures counted in the current window. */
  recentFailures: number;
  /** Why it last opened. */
  cause?: FailureCause | "manual";
  /** When an open breaker lets a probe through (epoch ms). */
  retryAt?: number;
}

/**
 * Failures that say nothing about the provider's health do not count: the client's own 4xx, and a
 * rate limit (the provider is well, it asks for a pause; see rateLimitWindow.ts).
 */
function counts(cause: FailureCause): boolean {
  return cause !== "http_4xx" && cause !== "http_429";
}

/**
 * Per-provider circuit breaker. Opens after `failures` failures within `window_ms` (at once for
 * auth failures: a bad key does not heal by retrying), stays open for a cooldown chosen by cause
 * and doubled on each reopen without a success in between (capped), then lets exactly one probe
 * through (half-open); the probe's success closes it, its failure reopens it.
 */
export class CircuitBreaker {
  #state: BreakerState = "closed";
  #failures: number[] = [];
  #openedCount = 0;
  #retryAt = 0;
  #cause: FailureCause | "manual" | undefined;
  /** The number of the probe in flight; 0 when none. */
  #probe = 0;
  #probesGranted = 0;

  constructor(
    private readonly settings: BreakerSettings,
    private readonly onTransition: (transition: BreakerTransition) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  state(): BreakerState {
    if (this.#state === "open" && this.now() >= this.#retryAt) {
      this.#state = "half_open";
      this.#probe = 0;
      this.onTransition({ to: "half_open", cause: this.#cause });
    }
    return this.#state;
  }

  /** Whether a request may go to this provider now (undefined: not); in half-open, once until the probe reports. */
  tryAcquire(): BreakerPass | undefined {
    const state = this.state();
    if (state === "closed") return "closed";
    if (state === "open" || this.#probe !== 0) return undefined;
    this.#probe = ++this.#probesGranted;
    return this.#probe;
  }

  /** A probe that ends without a verdict (the client left, an error of agentd's own) gives its slot back. */
  release(pass: BreakerPass): void {
    if (pass === this.#probe) this.#probe = 0;
  }

  onSuccess(): void {
    this.#failures = [];
    this.#openedCount = 0;
    this.#probe = 0;
    if (this.#state !== "closed") {
      this.#state = "closed";
      this.#cause = undefined;
      this.onTransition({ to: "closed" });
    }
  }

  onFailure(cause: FailureCause): void {
    if (!counts(cause)) {
      // A client error from a probe still proves the provider answers.
      if (this.#state === "half_open") this.onSuccess();
      return;
    }
    const now = this.now();
    if (this.#state === "half_open") {
      this.#open(cause);
      return;
    }
    if (this.#state === "open") return;
    this.#failures.push(now);
    const since = now - this.settings.window_ms;
    while (this.#failures.length > 0 && this.#failures[0]! <= since) this.#failures.shift();
    if (cause === "auth" || this.#failures.length >= this.settings.failures) this.#open(cause);
  }

  /** Opens by hand (the watchdog's "switch provider"); `cooldownMs` is capped like any other. */
  forceOpen(cooldownMs: number): number {
    const applied = Math.min(cooldownMs, this.settings.cooldown_max_ms);
    this.#enterOpen("manual", applied);
    return applied;
  }

  forceClose(): void {
    this.onSuccess();
  }

  snapshot(): BreakerSnapshot {
    const state = this.state();
    return {
      state,
      recentFailures: this.#failures.length,
      ...(this.#cause ? { cause: this.#cause } : {}),
      ...(state === "open" ? { retryAt: this.#retryAt } : {}),
    };
  }

  #open(cause: FailureCause): void {
    const base = cause === "auth" ? this.settings.cooldown_auth_ms : this.settings.cooldown_5xx_ms;
    const cooldown = Math.min(this.settings.cooldown_max_ms, base * 2 ** this.#openedCount);
    this.#openedCount++;
    this.#enterOpen(cause, cooldown);
  }

  #enterOpen(cause: FailureCause | "manual", cooldownMs: number): void {
    this.#state = "open";
    this.#cause = cause;
    this.#retryAt = this.now() + cooldownMs;
    this.#probe = 0;
    this.#failures = [];
    this.onTransition({ to: "open", cause, cooldownMs });
  }
}
