import type { Logger } from "../core/log/index.ts";

/** A decision: made at once, under the queue; what it started (an action, a webhook) is the promise it returns. */
export type Decide = () => Promise<void> | undefined;

export interface DecisionQueueOptions {
  /** Signals beyond this many waiting are dropped and counted. */
  max: number;
  log: Logger;
  /** How long one drain decides before it gives the event loop back (pipes, probes, timers). */
  sliceMs?: number;
}

interface Item {
  label: string;
  decide: Decide;
  bounded: boolean;
  done: (settled: Promise<void>) => void;
}

/**
 * The watchdog's lock: decisions run one at a time, in arrival order, each to completion without
 * waiting on anything. What a decision starts runs outside, so the next one never waits behind a
 * slow action. Signals are bounded: past `max` waiting, a new one is dropped, counted and logged
 * (`watchdog.queue_dropped`, once when dropping starts and once with the tally when the queue empties).
 * Follow-ups of actions already under way are not bounded: there is at most one per running action.
 */
export class DecisionQueue {
  readonly #items: Item[] = [];
  #bounded = 0;
  #dropped = 0;
  #unlogged = 0;
  #dropping = false;
  #scheduled: ReturnType<typeof setImmediate> | undefined;

  constructor(private readonly options: DecisionQueueOptions) {}

  /** Queues a decision; the promise settles once it ran and what it started has ended (at once when dropped). */
  push(label: string, decide: Decide, options: { bounded?: boolean } = {}): Promise<void> {
    const bounded = options.bounded ?? true;
    if (bounded && this.#bounded >= this.options.max) {
      this.#drop(label);
      return Promise.resolve();
    }
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#items.push({ label, decide, bounded, done: resolve });
    if (bounded) this.#bounded++;
    this.#schedule();
    return promise;
  }

  get depth(): number {
    return this.#items.length;
  }

  get dropped(): number {
    return this.#dropped;
  }

  #drop(label: string): void {
    this.#dropped++;
    if (this.#dropping) {
      this.#unlogged++;
      if (this.#unlogged >= this.options.max) this.#logDropped();
      return;
    }
    this.#dropping = true;
    this.options.log.warn("watchdog.queue_dropped", {
      dropped: 1,
      dropped_total: this.#dropped,
      queue_max: this.options.max,
      first: label,
    });
  }

  #logDropped(): void {
    if (this.#unlogged === 0) return;
    this.options.log.warn("watchdog.queue_dropped", { dropped: this.#unlogged, dropped_total: this.#dropped, queue_max: this.options.max });
    this.#unlogged = 0;
  }

  #schedule(): void {
    this.#scheduled ??= setImmediate(() => this.#drain());
  }

  #drain(): void {
    this.#scheduled = undefined;
    const until = performance.now() + (this.options.sliceMs ?? 20);
    for (let item = this.#items.shift(); item; item = this.#items.shift()) {
      if (item.bounded) this.#bounded--;
      item.done(this.#run(item));
      if (performance.now() >= until) break;
    }
    if (this.#items.length > 0) {
      this.#schedule();
      return;
    }
    this.#logDropped();
    this.#dropping = false;
  }

  #run(item: Item): Promise<void> {
    const failed = (error: unknown) => this.options.log.error("watchdog.error", { work: item.label, error });
    try {
      return item.decide()?.catch(failed) ?? Promise.resolve();
    } catch (error) {
      failed(error);
      return Promise.resolve();
    }
  }
}
