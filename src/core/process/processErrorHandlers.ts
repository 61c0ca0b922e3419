import type { Logger } from "../log/index.ts";
import { noteFailure } from "./failureCounters.ts";

let installed = false;

/**
 * Keeps the process serving through an unhandled rejection or an uncaught exception (Bun exits on
 * either by default). That is sound here: shared state changes synchronously and in store
 * transactions, so an error escaping one request or background task leaves nothing half-written;
 * ending the process would instead drop every other request, turn and terminal. Each one is logged
 * as `process.unhandled_error` and counted, so it is found and fixed.
 */
export function installProcessErrorHandlers(log: Logger): void {
  if (installed) return;
  installed = true;
  const report = (kind: "unhandled_rejection" | "uncaught_exception") => (error: unknown) => {
    noteFailure("unhandled");
    log.error("process.unhandled_error", { kind, error, stack: error instanceof Error ? error.stack : undefined });
  };
  process.on("unhandledRejection", report("unhandled_rejection"));
  process.on("uncaughtException", report("uncaught_exception"));
}
