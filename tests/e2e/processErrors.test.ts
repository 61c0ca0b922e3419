import { afterAll, describe, expect, test } from "bun:test";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// The compiled ./agentd meets errors nobody handles and keeps serving: logged, counted, same worker.

const daemons: DaemonProcess[] = [];
afterAll(async () => {
  for (const daemon of daemons) await daemon.stop();
  removeTempDirs();
});

async function unhandledTotal(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = /^agentd_unhandled_errors_total (\d+)$/m.exec(text);
  if (!match) throw new Error(`no agentd_unhandled_errors_total in /metrics:\n${text}`);
  return Number(match[1]);
}

describe("process error handlers (compiled binary)", () => {
  test("an unhandled rejection and an uncaught exception are logged and counted; the worker keeps serving", async () => {
    const daemon = await startDaemon({
      dataDir: makeTempDir("agentd-unhandled-"),
      config: { watchdog: { enabled: false } },
      env: { AGENTD_DEBUG_FAULTS: "1" },
    });
    daemons.push(daemon);
    const pid = daemon.workerPid();
    expect(await unhandledTotal(daemon.url)).toBe(0);
    for (const kind of ["unhandled_rejection", "uncaught_exception"]) {
      const mark = daemon.lines.length;
      const response = await fetch(`${daemon.url}/debug/faults/${kind}`, { method: "POST" });
      expect(response.status).toBe(202);
      const line = await daemon.waitForLine((r) => r.event === "process.unhandled_error", mark);
      expect(line).toMatchObject({ level: "error", component: "worker", kind, error: { message: `injected ${kind.replace("_", " ")}` } });
    }
    expect(await waitFor("both counted", async () => (await unhandledTotal(daemon.url)) === 2)).toBe(true);
    // Still the same worker, still answering, and the supervisor saw no exit.
    expect(daemon.workerPid()).toBe(pid);
    expect((await fetch(`${daemon.url}/livez`)).status).toBe(200);
    expect((await fetch(`${daemon.url}/health`)).status).toBe(200);
    expect(daemon.lines.some((r) => r.event === "worker.exit")).toBe(false);
  });

  test("without AGENTD_DEBUG_FAULTS the fault routes do not exist", async () => {
    const daemon = await startDaemon({ dataDir: makeTempDir("agentd-nofaults-"), config: { watchdog: { enabled: false } } });
    daemons.push(daemon);
    expect((await fetch(`${daemon.url}/debug/faults/unhandled_rejection`, { method: "POST" })).status).toBe(404);
    expect(await unhandledTotal(daemon.url)).toBe(0);
  });
});
