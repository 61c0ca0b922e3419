import { CallAbort } from "../../src/proxy/upstream/callAbort.ts";

/** A CallAbort aborted with `signal` (a test's deadline, a controller it aborts mid-call). */
export function callAbortOn(signal: AbortSignal): CallAbort {
  const abort = new CallAbort();
  if (signal.aborted) abort.abort();
  else signal.addEventListener("abort", () => abort.abort(), { once: true });
  return abort;
}
