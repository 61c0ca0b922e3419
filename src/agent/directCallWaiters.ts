import type { DirectCallAnswer, DirectCallRequest } from "./directCallTypes.ts";

export interface Waiter {
  request?: DirectCallRequest;
  listeners: Set<(answer: DirectCallAnswer) => void>;
  /** Stops the progress ticks of a wait for a decision. */
  stopWaiting?: () => void;
}

/**
 * Who waits for the answer to a direct call still in this worker, by the call's turn: the client
 * that made it, and any that asked for its result by id since. A finished answer ends the wait.
 */
export class CallWaiters {
  readonly #waiters = new Map<string, Waiter>();

  /** A client's call starts: it waits for its answer until the call finishes. */
  add(turnId: string, request: DirectCallRequest): Promise<DirectCallAnswer> {
    return new Promise<DirectCallAnswer>((resolve) => {
      this.#waiters.set(turnId, { request, listeners: new Set([resolve]) });
    });
  }

  get(turnId: string): Waiter | undefined {
    return this.#waiters.get(turnId);
  }

  entries(): IterableIterator<[string, Waiter]> {
    return this.#waiters.entries();
  }

  /** The next answer told to `waiter`, or, after `waitMs`, the call as it stands then. */
  async next(waiter: Waiter, waitMs: number, standing: () => DirectCallAnswer): Promise<DirectCallAnswer> {
    let listener: ((answer: DirectCallAnswer) => void) | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await new Promise<DirectCallAnswer>((resolve) => {
        listener = resolve;
        waiter.listeners.add(resolve);
        timer = setTimeout(() => resolve(standing()), waitMs);
      });
    } finally {
      clearTimeout(timer);
      if (listener) waiter.listeners.delete(listener);
    }
  }

  /** Tells everyone waiting on the turn's call; a finished answer is the last. */
  notify(turnId: string, answer: DirectCallAnswer, waiter: Waiter): void {
    if (answer.status === "finished") this.#waiters.delete(turnId);
    for (const listener of [...waiter.listeners]) listener(answer);
  }
}
