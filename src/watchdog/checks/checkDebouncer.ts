export type CheckState = "unknown" | "ok" | "failing";

export interface DebounceResult {
  state: CheckState;
  /** The state changed with this observation. */
  changed: boolean;
  /** Became flapping with this observation (reported once per flapping episode). */
  startedFlapping: boolean;
  flapping: boolean;
}

/** What a debouncer knows, so a restarted supervisor carries on from it (see CheckStateStore). */
export interface DebouncerSnapshot {
  state: CheckState;
  failures: number;
  successes: number;
  changes: number[];
  flapping: boolean;
}

export interface DebounceOptions {
  failureThreshold: number;
  successThreshold: number;
  flapChanges: number;
  flapWindowMs: number;
}

/**
 * Debounces a check: the state turns failing after `failureThreshold` failures in a row and ok after
 * `successThreshold` successes in a row, so one blip is not an incident. A check whose state
 * changes `flapChanges` times within the window is flapping. Pure: time is passed in.
 */
export class CheckDebouncer {
  #state: CheckState = "unknown";
  #failures = 0;
  #successes = 0;
  #changes: number[] = [];
  #flapping = false;

  constructor(private readonly options: DebounceOptions) {}

  get state(): CheckState {
    return this.#state;
  }

  snapshot(): DebouncerSnapshot {
    return {
      state: this.#state,
      failures: this.#failures,
      successes: this.#successes,
      changes: [...this.#changes],
      flapping: this.#flapping,
    };
  }

  restore(snapshot: DebouncerSnapshot): void {
    this.#state = snapshot.state;
    this.#failures = snapshot.failures;
    this.#successes = snapshot.successes;
    this.#changes = [...snapshot.changes];
    this.#flapping = snapshot.flapping;
  }

  observe(ok: boolean, now: number): DebounceResult {
    if (ok) {
      this.#successes++;
      this.#failures = 0;
    } else {
      this.#failures++;
      this.#successes = 0;
    }
    let next = this.#state;
    if (!ok && this.#failures >= this.options.failureThreshold) next = "failing";
    // The first successes after start make the check ok at once: there is nothing to debounce yet.
    if (ok && (this.#successes >= this.options.successThreshold || this.#state === "unknown")) next = "ok";
    const changed = next !== this.#state && !(this.#state === "unknown" && next === "ok");
    this.#state = next;
    if (changed) this.#changes.push(now);
    this.#changes = this.#changes.filter((t) => now - t < this.options.flapWindowMs);
    const wasFlapping = this.#flapping;
    this.#flapping = this.#changes.length >= this.options.flapChanges;
    return { state: next, changed, startedFlapping: this.#flapping && !wasFlapping, flapping: this.#flapping };
  }
}
