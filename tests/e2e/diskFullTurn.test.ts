import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { removeTempDirs } from "../support/tempDir.ts";
import { SmallDisk } from "./support/smallDisk.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, personHeaders, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// A disk that fills while a turn waits for the model (data dir on a 2 MiB tmpfs): the turn fails
// and even its failure cannot be recorded. Once space is freed the session is not stuck "running":
// /cancel ends what is left, and a new message starts a turn.

const disk = new SmallDisk("agentd-diskturn-outside-");
const dataDir = disk.dataDir;
let daemon: DaemonProcess | undefined;
let upstream: ScriptedUpstream;
let gate: ReturnType<typeof Bun.serve> | undefined;
// The model's answers wait here until the test has filled the disk: no race with the turn.
let release: () => void = () => undefined;
let held = new Promise<void>((resolve) => {
  release = resolve;
});
let heldRequests = 0;

beforeAll(async () => {
  disk.mount();
  mkdirSync(dataDir);
  upstream = startScriptedUpstream();
  gate = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const body = request.method === "GET" ? undefined : await request.arrayBuffer();
      if (url.pathname.endsWith("/chat/completions") || url.pathname.endsWith("/responses")) {
        heldRequests++;
        await held;
      }
      return fetch(`${upstream.url.replace(/\/v1\/?$/, "")}${url.pathname}${url.search}`, {
        method: request.method,
        headers: request.headers,
        body,
      });
    },
  });
  daemon = await startDaemon({
    dataDir,
    config: {
      watchdog: { enabled: false },
      providers: [{ name: "scripted", base_url: `http://127.0.0.1:${gate.port}/v1` }],
      agent: { model: "gpt-test" },
    },
  });
}, 120_000);

afterAll(async () => {
  release();
  await daemon?.stop();
  gate?.stop(true);
  await upstream?.close();
  disk.unmount();
  removeTempDirs();
}, 60_000);

describe("disk full in the middle of a turn", () => {
  test("once space is freed, /cancel ends the stranded turn and the session takes a message again", async () => {
    const url = daemon!.url;
    const { id } = await api<{ id: string }>(url, "/api/sessions", { body: {}, expect: 201 });
    upstream.enqueue({ kind: "text", text: "a long answer ".repeat(50) });
    const turn = new AbortController();
    const stream = fetch(`${url}/api/sessions/${id}/messages`, {
      method: "POST",
      headers: personHeaders(url, { "content-type": "application/json" }),
      body: JSON.stringify({ content: "say something" }),
      signal: turn.signal,
    }).catch(() => undefined);
    await waitFor("the model request", () => heldRequests >= 1);
    expect(disk.fill()).toBe("ENOSPC");
    const mark = daemon!.lines.length;
    release();
    await daemon!.waitForLine((r) => r.event === "turn.failed" && r.session === id, mark);
    disk.free();
    await waitFor("/health to pass again", async () => (await fetch(`${url}/health`)).status === 200);
    turn.abort();
    await stream;

    const cancelled = await api<{ cancelled: boolean; session: { state: string } }>(url, `/api/sessions/${id}/cancel`, {
      method: "POST",
      body: {},
    });
    expect(cancelled).toMatchObject({ cancelled: true, session: { state: "idle" } });
    const view = await api<{ turns: Array<{ status: string; end_reason: string | null }> }>(url, `/api/sessions/${id}`);
    expect(view.turns.map((t) => [t.status, t.end_reason])).toEqual([["done", "error"]]);

    held = Promise.resolve();
    upstream.enqueue({ kind: "text", text: "back again" });
    const again = await fetch(`${url}/api/sessions/${id}/messages`, {
      method: "POST",
      headers: personHeaders(url, { "content-type": "application/json" }),
      body: JSON.stringify({ content: "again" }),
    });
    expect(again.status).toBe(200);
    expect(await again.text()).toContain("back again");
  }, 120_000);
});
