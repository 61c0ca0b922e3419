/**
 * The client side of a call: its Request, whose signal aborts when the client goes away. Asking a
 * Bun request for its signal makes one, so a call asks only once it has lasted a while
 * (UpstreamAttempt): a signal made after its client left is already aborted.
 */
export interface ClientSide {
  readonly signal: AbortSignal;
}

/** The client disconnected; the upstream request was aborted and there is nobody to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super("the client disconnected");
    this.name = "ClientGoneError";
  }
}

/** Waits `ms`, or rejects with ClientGoneError as soon as `signal` aborts. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new ClientGoneError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ClientGoneError());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
