import { afterAll, describe, expect, test } from "bun:test";
import { importLine, runProbeScript } from "../support/probeScript.ts";
import { removeTempDirs } from "../support/tempDir.ts";

afterAll(() => removeTempDirs());

/** Module paths a fresh Bun process holds after importing `files` (each module's static imports followed). */
function modulesAfterImporting(files: string[]): Promise<string[]> {
  return runProbeScript<string[]>([...files.map((file) => importLine(file)), "console.log(JSON.stringify(Object.keys(require.cache)));"]);
}

describe("what the long-lived root supervisor loads", () => {
  // Started as root, the supervisor loads the monitor at start (startMonitor imports it on use):
  // both are judged here, as they run, not the supervisor's file alone.
  test("the supervisor and its monitor hold neither zod, Hono's app, nor the files capability until a file request", async () => {
    const modules = await modulesAfterImporting(["src/daemon/supervisor.ts", "src/daemon/monitor/commandMonitor.ts"]);
    expect(modules.length).toBeGreaterThan(50);
    expect(modules.some((path) => path.endsWith("src/daemon/monitor/commandMonitor.ts"))).toBe(true);
    const unwanted = modules.filter(
      (path) => path.includes("/zod/") || /hono\/dist\/hono(-base)?\.js$/.test(path) || /src\/files\/(index|fileSchemas)\.ts$/.test(path),
    );
    expect(unwanted).toEqual([]);
  });

  test("the monitor's file work loads them on its first file request", async () => {
    const modules = await modulesAfterImporting(["src/daemon/monitor/monitorFiles.ts"]);
    expect(modules.some((path) => path.endsWith("src/files/fileSchemas.ts"))).toBe(true);
  });
});

describe("what the worker loads", () => {
  test("the watchdog's index gives stores, routes and tools without the engine that runs in the supervisor", async () => {
    const modules = await modulesAfterImporting(["src/watchdog/index.ts"]);
    expect(modules.some((path) => path.endsWith("src/watchdog/watchdogCapability.ts"))).toBe(true);
    const engine = modules.filter((path) =>
      /src\/watchdog\/(watchdog|watchdogRuntime|escalation|incidentTracker)\.ts$|src\/watchdog\/decide\/tier3/.test(path),
    );
    expect(engine).toEqual([]);
  });
});
