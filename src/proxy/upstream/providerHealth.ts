/**
 * Recent health of one provider: an error rate and a latency, both exponentially weighted, with
 * the error rate also fading over time so a provider that failed a while ago wins traffic back.
 */
export class ProviderHealth {
  #errorRate = 0;
  #latencyMs: number | undefined;
  #lastAt: number;

  constructor(
    private readonly halfLifeMs = 30_000,
    private readonly now: () => number = Date.now,
    private readonly alpha = 0.2,
  ) {
    this.#lastAt = now();
  }

  record(ok: boolean, latencyMs?: number): void {
    this.#decay();
    this.#errorRate = this.#errorRate * (1 - this.alpha) + (ok ? 0 : this.alpha);
    if (latencyMs !== undefined)
      this.#latencyMs = this.#latencyMs === undefined ? latencyMs : this.#latencyMs * (1 - this.alpha) + latencyMs * this.alpha;
  }

  errorRate(): number {
    this.#decay();
    return this.#errorRate;
  }

  latencyMs(): number | undefined {
    return this.#latencyMs;
  }

  #decay(): void {
    const now = this.now();
    const elapsed = now - this.#lastAt;
    if (elapsed > 0) this.#errorRate *= 0.5 ** (elapsed / this.halfLifeMs);
    this.#lastAt = now;
  }
}
