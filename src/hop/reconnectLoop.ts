export interface ReconnectLoopOptions {
  /** Aborted when the hop is closed: the loop stops at the next check. */
  signal: AbortSignal;
  giveUpAt: number;
  initialMs: number;
  maxMs: number;
  /** One connect attempt; resolves once connected. */
  attempt(): Promise<void>;
  /** Told of each failed attempt (unless the loop was stopped meanwhile) and the delay before the next. */
  onFailure(error: unknown, attempt: number, nextMs: number): void;
  /** A failure no retry can fix, e.g. a refused host key. */
  isFinal(error: unknown): boolean;
}

export type ReconnectOutcome =
  | { kind: "connected"; attempt: number }
  /** An attempt connected after the loop was stopped: the caller drops what it built. */
  | { kind: "connected_after_stop" }
  | { kind: "stopped" }
  | { kind: "gave_up" };

/** Retries with doubling, jittered backoff until connected, stopped, refused for good, or past `giveUpAt`. */
export async function retryUntilConnected(options: ReconnectLoopOptions): Promise<ReconnectOutcome> {
  const { signal } = options;
  let delay = options.initialMs;
  for (let attempt = 1; !signal.aborted; attempt++) {
    try {
      await options.attempt();
      return signal.aborted ? { kind: "connected_after_stop" } : { kind: "connected", attempt };
    } catch (error) {
      if (signal.aborted) return { kind: "stopped" };
      options.onFailure(error, attempt, delay);
      if (options.isFinal(error) || Date.now() >= options.giveUpAt) return { kind: "gave_up" };
    }
    await abortableSleep(delay * (0.8 + Math.random() * 0.4), signal);
    delay = Math.min(delay * 2, options.maxMs);
  }
  return { kind: "stopped" };
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  // A close that came before the wait (an abort listener added now would never fire) ends it at once.
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
