import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { removeTempDirs } from "../support/tempDir.ts";
import { startWorker, type RunningWorker } from "./workerProcess.ts";

// /status content negotiation, against a real worker. (Files named status* in this folder belong
// to the status page's own tests; this one checks only which format each client gets.)
let worker: RunningWorker;
beforeAll(async () => {
  worker = await startWorker();
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  removeTempDirs();
});

const get = (accept: string | undefined, query = "") =>
  fetch(`${worker.url}/status${query}`, { headers: accept === undefined ? {} : { accept } });

describe("/status content negotiation", () => {
  test("a browser's Accept gets HTML", async () => {
    const response = await get("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("text/html");
    expect(response.headers.get("vary")).toContain("Accept");
    const html = await response.text();
    expect(html.toLowerCase()).toStartWith("<!doctype html>");
    expect(html).toContain("</html>");
  });

  test("curl's */* gets plain text", async () => {
    const response = await get("*/*");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("text/plain");
    const text = await response.text();
    expect(text).toStartWith("agentd ");
    expect(text).toContain(String(worker.pid));
    expect(text).toEndWith("\n");
    expect(text).not.toContain("<html");
  });

  test("no Accept header at all gets plain text too", async () => {
    const response = await fetch(`${worker.url}/status`, { headers: { accept: "" } });
    expect(response.headers.get("content-type")).toStartWith("text/plain");
  });

  test("Accept: application/json gets the snapshot as JSON", async () => {
    const response = await get("application/json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    const body = (await response.json()) as { health: { status: string }; worker: { pid: number } };
    expect(body.health.status).toBe("pass");
    expect(body.worker.pid).toBe(worker.pid);
  });

  test("?format=json wins over a browser's Accept", async () => {
    const response = await get("text/html", "?format=json");
    expect(response.headers.get("content-type")).toStartWith("application/json");
    expect(((await response.json()) as { worker: { pid: number } }).worker.pid).toBe(worker.pid);
  });
});
