/** The last N latencies of a provider, for p50/p95 on the status page (sorted only when asked). */
export class LatencyWindow {
  readonly #samples: Float64Array;
  #count = 0;
  #next = 0;

  constructor(size = 512) {
    this.#samples = new Float64Array(size);
  }

  add(ms: number): void {
    this.#samples[this.#next] = ms;
    this.#next = (this.#next + 1) % this.#samples.length;
    if (this.#count < this.#samples.length) this.#count++;
  }

  /** Nearest-rank percentile (0 < p ≤ 100); undefined with no samples. */
  percentile(p: number): number | undefined {
    if (this.#count === 0) return undefined;
    const sorted = this.#samples.slice(0, this.#count).sort();
    const rank = Math.min(this.#count, Math.max(1, Math.ceil((p / 100) * this.#count)));
    return sorted[rank - 1];
  }
}
