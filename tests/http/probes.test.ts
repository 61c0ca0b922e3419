import { afterEach, describe, expect, test } from "bun:test";
import { startApp, type RunningApp } from "./appHarness.ts";

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

describe("/livez", () => {
  test("answers 200 from the process alone, even when a health check fails", async () => {
    running = startApp({
      healthSources: { store: () => [{ key: "store:writable", status: "fail" }] },
      readiness: () => ["store not writable"],
    });
    const response = await fetch(`${running.url}/livez`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("ok\n");
  });
});

describe("/readyz", () => {
  test("200 when every dependency is ready", async () => {
    running = startApp();
    const response = await fetch(`${running.url}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("ready\n");
  });

  test("503 with the reasons when one is not", async () => {
    running = startApp({ readiness: () => ["store not writable: disk full", "config not loaded"] });
    const response = await fetch(`${running.url}/readyz`);
    expect(response.status).toBe(503);
    expect(await response.text()).toBe("not ready: store not writable: disk full; config not loaded\n");
  });
});

describe("/health", () => {
  test("application/health+json with status, version, checks keyed component:measurement and the totals", async () => {
    running = startApp({
      healthSources: {
        store: () => [{ key: "store:writable", status: "pass", observedValue: true }],
        process: () => [{ key: "worker:memory", status: "pass", observedValue: 40, observedUnit: "MiB" }],
      },
    });
    await fetch(`${running.url}/livez`);
    await fetch(`${running.url}/livez`);
    const response = await fetch(`${running.url}/health`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/health+json");
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = (await response.json()) as Record<string, any>;
    expect(body.status).toBe("pass");
    expect(body.version).toBe("9.9.9-test");
    expect(Object.keys(body.checks).sort()).toEqual(["store:writable", "worker:memory"]);
    const memory = body.checks["worker:memory"][0];
    expect(memory).toMatchObject({ status: "pass", observedValue: 40, observedUnit: "MiB" });
    expect(Number.isNaN(Date.parse(memory.time))).toBe(false);
    expect(body.uptime_s).toBeGreaterThanOrEqual(5);
    expect(body.memory_mb).toBeGreaterThan(1);
    expect(body.requests_total).toBe(2);
    expect(body.notes).toEqual(["a note for the operator"]);
  });

  test("a warning keeps 200 with status warn", async () => {
    running = startApp({ healthSources: { disk: () => [{ key: "disk:free", status: "warn", observedValue: 4, observedUnit: "%" }] } });
    const response = await fetch(`${running.url}/health`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe("warn");
  });

  test("a failing check makes it 503 with status fail", async () => {
    running = startApp({
      healthSources: {
        store: () => [{ key: "store:writable", status: "fail", output: "disk full" }],
        disk: () => [{ key: "disk:free", status: "warn" }],
      },
    });
    const response = await fetch(`${running.url}/health`);
    expect(response.status).toBe(503);
    expect(response.headers.get("content-type")).toBe("application/health+json");
    const body = (await response.json()) as Record<string, any>;
    expect(body.status).toBe("fail");
    expect(body.checks["store:writable"][0]).toMatchObject({ status: "fail", output: "disk full" });
  });

  test("a check source that throws becomes a failing check, not a 500", async () => {
    running = startApp({
      healthSources: {
        broken: () => {
          throw new Error("boom");
        },
      },
    });
    const response = await fetch(`${running.url}/health`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as Record<string, any>;
    expect(body.checks["broken:check"][0]).toMatchObject({ status: "fail", output: "Cannot run the broken check: boom" });
  });
});
