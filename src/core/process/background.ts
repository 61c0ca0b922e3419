import { createLogger, type LogFields, type Logger } from "../log/index.ts";
import { noteFailure } from "./failureCounters.ts";

const defaultLog = createLogger("background");

/**
 * The one way to start work nobody awaits (a turn, a sweep, a prune): a rejection is logged with
 * its context as `background.failed` and counted, never left to end the process. The task's
 * `done` always resolves, so a caller may still wait for the work to finish.
 */
export function runInBackground(
  name: string,
  fn: () => Promise<unknown> | unknown,
  context: LogFields = {},
  log: Logger = defaultLog,
): BackgroundTask {
  const failed = (error: unknown) => {
    noteFailure("background");
    log.error("background.failed", { ...context, task: name, error });
  };
  try {
    return { done: Promise.resolve(fn()).then(() => undefined, failed) };
  } catch (error) {
    failed(error);
    return { done: Promise.resolve() };
  }
}

export interface BackgroundTask {
  /** Settles when the work has ended, however it ended; it never rejects. */
  readonly done: Promise<void>;
}
