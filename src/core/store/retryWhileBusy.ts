/**
 * Runs `step` again while it fails with `isBusy`, sleeping with a growing, jittered backoff, until
 * `budgetMs` has passed; then the last error is thrown. For the steps of opening a store that
 * SQLite answers with SQLITE_BUSY at once, without calling the busy handler: switching a fresh file
 * to WAL needs an exclusive lock, and SQLite refuses to wait for it while another connection that
 * holds a shared lock waits too (it would deadlock). The failed step has released its locks, so
 * trying it again after a short sleep lets one process through, then the others.
 */
export function retryWhileBusy<T>(step: () => T, isBusy: (error: unknown) => boolean, budgetMs: number): T {
  const deadline = Date.now() + budgetMs;
  let delayMs = 5;
  for (;;) {
    try {
      return step();
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
      // Synchronous on purpose: opening the store happens once, at start, before anything is served.
      Bun.sleepSync(Math.min(delayMs * (0.5 + Math.random()), Math.max(0, deadline - Date.now())));
      delayMs = Math.min(delayMs * 2, 250);
    }
  }
}
