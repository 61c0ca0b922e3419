import type { WatchdogCounters } from "../watchdog/watchdogCounters.ts";

/**
 * What the supervisor pushes to its worker over the IPC channel they always share, unasked: the
 * watchdog's counters (the supervisor runs the watchdog; the worker serves /metrics). Replies of the
 * monitor (split workers) travel on the same channel with an `id`; a push never has one.
 * Pure: shapes only.
 */
export interface CountersPush {
  push: "watchdog_counters";
  counters: WatchdogCounters;
}

export function countersPush(counters: WatchdogCounters): CountersPush {
  return { push: "watchdog_counters", counters };
}

export function isPush(message: unknown): message is CountersPush {
  return typeof message === "object" && message !== null && (message as { push?: unknown }).push === "watchdog_counters";
}

/**
 * The worker's end: the supervisor's latest counters, kept as they arrive (none before the first
 * push: the families then show zeros). `close` lets the process exit: an open channel keeps it alive.
 */
export class SupervisorChannel {
  #counters: WatchdogCounters | undefined;

  constructor() {
    process.on("message", (message: unknown) => {
      if (isPush(message)) this.#counters = message.counters;
    });
  }

  get watchdogCounters(): WatchdogCounters | undefined {
    return this.#counters;
  }

  close(): void {
    if (process.connected) process.disconnect?.();
  }
}
