import { afterEach, expect, test } from "bun:test";
import { Hono } from "hono";
import { waitFor } from "../support/waitFor.ts";
import { type RunningApp, startApp } from "./appHarness.ts";

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** A GET route answering with an endless stream, as a session's events are: what it began and what ended it. */
function feedMount(seen: { started: number; cancelled: number }) {
  const app = new Hono();
  app.get("/feed", () => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        seen.started++;
        controller.enqueue(new TextEncoder().encode(": hello\n\n"));
        timer = setInterval(() => controller.enqueue(new TextEncoder().encode(": heartbeat\n\n")), 20);
      },
      cancel() {
        seen.cancelled++;
        clearInterval(timer);
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  return { path: "/v1", app };
}

test("a HEAD on a streaming route gets the GET's status and headers, and the stream it began is cancelled", async () => {
  const seen = { started: 0, cancelled: 0 };
  running = startApp({ mounts: [feedMount(seen)] });
  const head = await fetch(`${running.url}/v1/feed`, { method: "HEAD" });
  expect({ status: head.status, type: head.headers.get("content-type"), body: await head.text() }).toEqual({
    status: 200,
    type: "text/event-stream",
    body: "",
  });
  await waitFor("the stream to be cancelled", () => seen.cancelled === 1, { timeoutMs: 2_000 });
  expect(seen.started).toBe(1);
  // A GET still streams, until its reader leaves.
  const get = await fetch(`${running.url}/v1/feed`);
  const reader = get.body!.getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toContain(": hello");
  await reader.cancel();
  await waitFor("the GET's stream to be cancelled", () => seen.cancelled === 2, { timeoutMs: 2_000 });
});

test("a HEAD on a route with a plain body and on a missing route answers as the GET does, without a body", async () => {
  running = startApp();
  const livez = await fetch(`${running.url}/livez`, { method: "HEAD" });
  expect({ status: livez.status, body: await livez.text() }).toEqual({ status: 200, body: "" });
  const missing = await fetch(`${running.url}/nowhere`, { method: "HEAD" });
  expect({ status: missing.status, body: await missing.text() }).toEqual({ status: 404, body: "" });
});
