import { expect, test } from "bun:test";
import { watchdogConfigSchema } from "../../src/core/config/sections/watchdogConfig.ts";
import { createLogger } from "../../src/core/log/index.ts";
import type { WatchdogCounters } from "../../src/watchdog/index.ts";
import { WatchdogRuntime } from "../../src/watchdog/watchdogRuntime.ts";
import { memoryStores } from "../support/memoryStore.ts";

const store = memoryStores();

test("a worker that starts listening gets the counters at once, even when they have not changed since the last push", async () => {
  const pushed: WatchdogCounters[] = [];
  const runtime = new WatchdogRuntime({
    config: watchdogConfigSchema().parse({ enabled: false }),
    db: store(),
    log: createLogger("test"),
    workerPid: () => undefined,
    restartWorker: async () => "not here",
    publish: (counters) => pushed.push(counters),
  });
  runtime.workerListening("http://127.0.0.1:9", 1);
  expect(pushed).toHaveLength(1);
  expect(pushed[0]).toMatchObject({ signals_total: 0, queue_depth: 0 });
  // The worker was replaced: the same counters again, for the new one.
  runtime.workerGone();
  runtime.workerListening("http://127.0.0.1:9", 2);
  expect(pushed).toHaveLength(2);
  await runtime.stop();
});
