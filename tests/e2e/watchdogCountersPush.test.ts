import { afterAll, expect, test } from "bun:test";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// The watchdog runs in the supervisor, /metrics in the worker: the supervisor pushes its counters
// over their IPC channel, also to a worker that replaced one it killed (nothing goes through the store).

let daemon: DaemonProcess | undefined;
afterAll(async () => {
  await daemon?.stop();
  removeTempDirs();
});

const signals = async (url: string): Promise<number | undefined> => {
  const body = await (await fetch(`${url}/metrics`)).text();
  const match = /^agentd_watchdog_signals_total (\d+)$/m.exec(body);
  return match ? Number(match[1]) : undefined;
};

test("a new worker's /metrics has the supervisor's counters at once: the signal its predecessor's death raised", async () => {
  daemon = await startDaemon({ dataDir: makeTempDir("agentd-e2e-counters-"), config: { watchdog: { tick_ms: 100 } } });
  expect(await signals(daemon.url)).toBe(0);
  await daemon.killWorker();
  // The counters changed while no worker listened; the new one gets them when it does, not at a later change.
  const seen = await waitFor(
    "the crash's signal on the new worker's /metrics",
    async () => ((await signals(daemon!.url)) ?? 0) >= 1 || undefined,
  );
  expect(seen).toBe(true);
  expect(daemon.lines.some((r) => r.event === "watchdog.incident_opened" && r.incident_component === "worker")).toBe(true);
}, 120_000);
