/**
 * A check that does I/O, answered from its last result for `ttlMs`: probes come often and in
 * bursts (CI polling, 200 concurrent /health calls), and one store write a second is enough.
 */
export function cachedFor<T>(ttlMs: number, run: () => T, now: () => number = Date.now): Cached<T> {
  let last: { at: number; value: T } | undefined;
  const cached = () => {
    const at = now();
    if (!last || at - last.at >= ttlMs) last = { at, value: run() };
    return last.value;
  };
  // A failure seen elsewhere (a write refused for lack of space) makes the next call check again.
  cached.invalidate = () => {
    last = undefined;
  };
  return cached;
}

export interface Cached<T> {
  (): T;
  invalidate(): void;
}
