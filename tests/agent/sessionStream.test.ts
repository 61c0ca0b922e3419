import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseSidecar } from "../../src/agent/index.ts";
import { waitFor } from "../support/waitFor.ts";
import { readSse, startHarness, type Harness } from "./agentHarness.ts";
import { echoTool, hangingTool } from "./testTools.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const API_KEY = "sk-test-VERYSECRETKEY0123456789abcdef";

describe("session streams", () => {
  test("cancel mid-stream stops the model request and ends the turn as cancelled", async () => {
    h = await startHarness();
    h.upstream.enqueue({ kind: "stall_mid_stream", afterEvents: 2, reply: { kind: "text", chunks: ["partial ", "answer", " never"] } });
    const id = await h.createSession();
    const turn = h.send(id, "talk slowly");
    await h.upstream.waitForRequests(1);
    await waitFor(
      "the first delta",
      () => (h!.db.query("SELECT count(*) AS n FROM agent_events WHERE type = 'text.delta'").get() as any).n >= 1,
    );
    const cancel = (await (await h.api(`/api/sessions/${id}/cancel`, { method: "POST" })).json()) as any;
    expect(cancel.cancelled).toBe(true);
    const events = await turn;
    expect(events.at(-1)!.data).toMatchObject({ reason: "cancelled" });
    await h.upstream.waitForDisconnect(0);
    expect(((await (await h.api(`/api/sessions/${id}`)).json()) as any).session.state).toBe("idle");
  });

  test("a client that disconnects does not stop the turn; events?after=N resumes the stream", async () => {
    const gate = { started: 0, aborted: 0 };
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const calls: unknown[] = [];
    const { defineTool } = await import("../../src/agent/index.ts");
    const { z } = await import("zod");
    const gated = defineTool({
      name: "gated",
      description: "waits for the test",
      parameters: z.strictObject({}),
      scope: "read",
      timeoutMs: 30_000,
      async execute() {
        gate.started++;
        await released;
        return "released";
      },
    });
    h = await startHarness({ tools: [gated as any, echoTool(calls)], heartbeatMs: 20 });
    h.upstream.enqueue({ kind: "text", toolCalls: [{ name: "gated", arguments: "{}" }] }, { kind: "text", text: "finished anyway" });
    const id = await h.createSession();
    const client = new AbortController();
    const response = await h.api(`/api/sessions/${id}/messages`, { json: { content: "go" }, signal: client.signal });
    const reader = response.body!.getReader();
    let raw = "";
    while (!raw.includes(": heartbeat")) raw += new TextDecoder().decode((await reader.read()).value);
    await waitFor("the tool to start", () => gate.started === 1);
    client.abort();
    await reader.cancel().catch(() => {});
    release();
    await waitFor("the turn to end", () => (h!.db.query("SELECT state FROM agent_sessions WHERE id = ?").get(id) as any).state === "idle");
    const all = await h.follow(id, 0);
    expect(all.map((e) => e.event)).toEqual(["turn.start", "tool.start", "tool.end", "text.delta", "turn.end"]);
    const tail = await h.follow(id, Number(all[2]!.id));
    expect(tail.map((e) => e.event)).toEqual(["text.delta", "turn.end"]);
    const viaHeader = await readSse(await h.api(`/api/sessions/${id}/events`, { headers: { "last-event-id": all[3]!.id! } }));
    expect(viaHeader.map((e) => e.event)).toEqual(["turn.end"]);
    expect((await h.api(`/api/sessions/${id}/events?after=-1`)).status).toBe(400);
  });

  test("the sidecar holds every request, response and tool record, parses back, and hides the key", async () => {
    const calls: unknown[] = [];
    h = await startHarness({ tools: [echoTool(calls)], apiKey: API_KEY });
    h.upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "e1", name: "echo", arguments: JSON.stringify({ text: `token is ${API_KEY}` }) }] },
      { kind: "text", chunks: ["the ", "end"] },
    );
    const id = await h.createSession();
    await h.send(id, "echo my key");
    expect(h.upstream.completionRequests()[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    await h.agent.close();
    const file = join(h.dataDir, "debug", `session_${id}.debug.jsonl`);
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain("VERYSECRETKEY");
    const records = parseSidecar(text);
    expect(records.map((r) => r.kind)).toEqual([
      "model.request",
      "model.response",
      "tool.start",
      "tool.end",
      "model.request",
      "model.response",
      "turn.end",
    ]);
    expect((records[0] as any).headers.authorization).toBe("[redacted]");
    expect((records[1] as any).message).toMatchObject({ toolCalls: [{ id: "e1", name: "echo" }], finishReason: "tool_calls" });
    expect((records[5] as any).message.content).toBe("the end");
    expect((records[3] as any).outcome).toBe("ok");
    // Every JSON line is followed by its readable rendering and a separator.
    const lines = text.trimEnd().split("\n");
    let i = 0;
    for (const record of records) {
      expect(JSON.parse(lines[i]!)).toEqual(record);
      i++;
      expect(lines[i]).toBe("# {");
      while (lines[i] !== "# ----") {
        expect(lines[i]!.startsWith("# ")).toBe(true);
        i++;
      }
      i++;
    }
    expect(i).toBe(lines.length);
    const served = await h.api(`/api/sessions/${id}/debug`);
    expect(await served.text()).toBe(text);
  });

  test("the sidecar rotates at its size cap", async () => {
    h = await startHarness({ tools: [echoTool()], agent: { debug: { max_bytes: 4096, keep: 2 } } });
    h.upstream.setDefault({ kind: "text", text: "x".repeat(1500) });
    const id = await h.createSession();
    for (let i = 0; i < 4; i++) await h.send(id, `message ${i}`);
    await h.agent.close();
    const files = readdirSync(join(h.dataDir, "debug")).sort();
    expect(files).toEqual([`session_${id}.debug.jsonl`, `session_${id}.debug.jsonl.1`, `session_${id}.debug.jsonl.2`]);
    for (const name of files) parseSidecar(readFileSync(join(h.dataDir, "debug", name), "utf8"));
  });

  test("close() cancels a running turn cleanly", async () => {
    const hang = { started: 0, aborted: 0 };
    h = await startHarness({ tools: [hangingTool("wait", 60_000, hang)] });
    h.upstream.enqueue({ kind: "text", toolCalls: [{ name: "wait", arguments: "{}" }] });
    const id = await h.createSession();
    const turn = h.send(id, "wait forever");
    await waitFor("the tool to start", () => hang.started === 1);
    await h.agent.close();
    const events = await turn;
    expect(events.at(-1)!.data).toMatchObject({ reason: "cancelled", cause: "agentd is stopping" });
    expect(hang.aborted).toBe(1);
    const row = h.db.query("SELECT outcome FROM agent_tool_calls WHERE session_id = ?").get(id) as any;
    expect(row.outcome).toBe("cancelled");
  });
});
