import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { defineTool, type ToolDefinition } from "../../src/agent/index.ts";
import { waitFor } from "../support/waitFor.ts";
import { startHarness, type Harness } from "./agentHarness.ts";
import { echoTool, failingTool, hangingTool } from "./testTools.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const toolMessages = (body: any) => (body.messages as any[]).filter((m) => m.role === "tool");

describe("agent loop", () => {
  test("two sequential tool calls, then a final answer", async () => {
    const calls: unknown[] = [];
    h = await startHarness({ tools: [echoTool(calls)] });
    h.upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "c1", name: "echo", arguments: '{"text":"one"}' }] },
      { kind: "text", toolCalls: [{ id: "c2", name: "echo", arguments: '{"text":"two"}' }] },
      { kind: "text", chunks: ["all ", "done"] },
    );
    const id = await h.createSession();
    const events = await h.send(id, "echo twice");
    expect(calls).toEqual([{ text: "one" }, { text: "two" }]);
    const types = events.map((e) => e.event);
    expect(types[0]).toBe("turn.start");
    expect(types.filter((t) => t === "tool.start")).toHaveLength(2);
    expect(types.at(-1)).toBe("turn.end");
    expect(events.at(-1)!.data).toMatchObject({ reason: "stop", steps: 3, content: "all done" });
    expect(
      events
        .filter((e) => e.event === "text.delta")
        .map((e) => e.data.delta)
        .join(""),
    ).toBe("all done");
    const seqs = events.map((e) => Number(e.id));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));

    const requests = h.upstream.completionRequests();
    expect(requests).toHaveLength(3);
    expect(requests[0]!.body.tools.map((t: any) => t.function.name)).toContain("echo");
    expect(toolMessages(requests[1]!.body)).toEqual([{ role: "tool", tool_call_id: "c1", content: '{"echoed":"one"}' }]);
    expect(toolMessages(requests[2]!.body).map((m) => m.tool_call_id)).toEqual(["c1", "c2"]);

    const history = (await (await h.api(`/api/sessions/${id}`)).json()) as any;
    expect(history.session.state).toBe("idle");
    expect(history.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"]);
    expect(history.tool_calls.map((c: any) => [c.tool, c.outcome, c.status])).toEqual([
      ["echo", "ok", "finished"],
      ["echo", "ok", "finished"],
    ]);
    expect(history.tool_calls[0].output_bytes).toBe(16);
    const logEnds = h.log.filter((l) => l.event === "tool.end");
    expect(logEnds.map((l) => [l.tool, l.outcome, l.call_id, l.session])).toEqual([
      ["echo", "ok", "c1", id],
      ["echo", "ok", "c2", id],
    ]);
    expect(typeof logEnds[0]!.duration_ms).toBe("number");
  });

  test("parallel tool calls are run and answered in the order the model listed them", async () => {
    const order: string[] = [];
    const slowFirst = defineTool({
      name: "mark",
      description: "records its label",
      parameters: z.strictObject({ label: z.string() }),
      scope: "read",
      timeoutMs: 10_000,
      async execute(args) {
        order.push(`start ${args.label}`);
        await Promise.resolve();
        order.push(`end ${args.label}`);
        return args.label;
      },
    }) as ToolDefinition;
    h = await startHarness({ tools: [slowFirst] });
    h.upstream.enqueue(
      {
        kind: "text",
        toolCalls: [
          { id: "p1", name: "mark", arguments: '{"label":"a"}' },
          { id: "p2", name: "mark", arguments: '{"label":"b"}' },
          { id: "p3", name: "mark", arguments: '{"label":"c"}' },
        ],
      },
      { kind: "text", text: "marked" },
    );
    const id = await h.createSession();
    const events = await h.send(id, "mark three");
    expect(order).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
    expect(events.filter((e) => e.event === "tool.end").map((e) => e.data.call_id)).toEqual(["p1", "p2", "p3"]);
    const second = h.upstream.completionRequests()[1]!.body;
    expect(toolMessages(second).map((m) => [m.tool_call_id, m.content])).toEqual([
      ["p1", "a"],
      ["p2", "b"],
      ["p3", "c"],
    ]);
  });

  test("a failing tool and a timed-out tool are recorded and the turn goes on", async () => {
    const hang = { started: 0, aborted: 0 };
    h = await startHarness({ tools: [failingTool, hangingTool("stuck", 150, hang)] });
    h.upstream.enqueue(
      {
        kind: "text",
        toolCalls: [
          { id: "f1", name: "boom", arguments: "{}" },
          { id: "t1", name: "stuck", arguments: "{}" },
        ],
      },
      { kind: "text", text: "both failed, moving on" },
    );
    const id = await h.createSession();
    const events = await h.send(id, "try things");
    expect(events.at(-1)!.data.reason).toBe("stop");
    const ends = events.filter((e) => e.event === "tool.end").map((e) => [e.data.tool, e.data.outcome, e.data.error?.code]);
    expect(ends).toEqual([
      ["boom", "error", "disk_full"],
      ["stuck", "timeout", "timeout"],
    ]);
    expect(hang.aborted).toBe(1);
    const results = toolMessages(h.upstream.completionRequests()[1]!.body).map((m) => JSON.parse(m.content));
    expect(results[0]).toEqual({ error: { code: "disk_full", message: "the disk is on fire" } });
    expect(results[1].error.code).toBe("timeout");
    const history = (await (await h.api(`/api/sessions/${id}`)).json()) as any;
    expect(history.tool_calls.map((c: any) => [c.outcome, c.error_code])).toEqual([
      ["error", "disk_full"],
      ["timeout", "timeout"],
    ]);
    expect(h.log.filter((l) => l.event === "tool.end").map((l) => [l.level, l.outcome])).toEqual([
      ["warn", "error"],
      ["warn", "timeout"],
    ]);
  });

  test("invalid arguments go back to the model, which corrects them on the next step", async () => {
    const calls: unknown[] = [];
    h = await startHarness({ tools: [echoTool(calls)] });
    h.upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "bad", name: "echo", arguments: '{"txt": 5}' }] },
      { kind: "text", toolCalls: [{ id: "bad2", name: "echo", arguments: "{not json" }] },
      { kind: "text", toolCalls: [{ id: "good", name: "echo", arguments: '{"text":"fixed"}' }] },
      { kind: "text", text: "fixed it" },
    );
    const id = await h.createSession();
    const events = await h.send(id, "echo");
    expect(events.at(-1)!.data).toMatchObject({ reason: "stop", steps: 4 });
    expect(calls).toEqual([{ text: "fixed" }]);
    const requests = h.upstream.completionRequests();
    const first = JSON.parse(toolMessages(requests[1]!.body)[0].content);
    expect(first.error.code).toBe("invalid_arguments");
    expect(first.error.message).toContain("text");
    const second = JSON.parse(toolMessages(requests[2]!.body)[1].content);
    expect(second.error.code).toBe("invalid_arguments");
    expect(second.error.message).toContain("not valid JSON");
  });

  test("an unknown tool is answered with an error naming the available ones", async () => {
    h = await startHarness({ tools: [echoTool()] });
    h.upstream.enqueue({ kind: "text", toolCalls: [{ id: "u1", name: "teleport", arguments: "{}" }] }, { kind: "text", text: "ok" });
    const id = await h.createSession();
    await h.send(id, "go");
    const result = JSON.parse(toolMessages(h.upstream.completionRequests()[1]!.body)[0].content);
    expect(result.error.code).toBe("unknown_tool");
    expect(result.error.message).toContain("echo");
  });

  test("max_steps ends a turn that keeps calling tools", async () => {
    h = await startHarness({ tools: [echoTool()], agent: { max_steps: 2 } });
    h.upstream.setDefault({ kind: "text", toolCalls: [{ name: "echo", arguments: '{"text":"again"}' }] });
    const id = await h.createSession();
    const events = await h.send(id, "loop");
    expect(events.at(-1)!.data).toMatchObject({ reason: "max_steps", steps: 2 });
    expect(h.upstream.completionRequests()).toHaveLength(2);
  });

  test("a long tool call emits tool.progress while it runs", async () => {
    let db: Harness["db"] | undefined;
    const patient = defineTool({
      name: "patient",
      description: "waits until two progress events were sent",
      parameters: z.strictObject({}),
      scope: "read",
      timeoutMs: 20_000,
      async execute() {
        await waitFor(
          "two progress events",
          () => (db!.query("SELECT count(*) AS n FROM agent_events WHERE type = 'tool.progress'").get() as { n: number }).n >= 2,
        );
        return "done";
      },
    }) as ToolDefinition;
    h = await startHarness({ tools: [patient], agent: { progress_interval_ms: 30 } });
    db = h.db;
    h.upstream.enqueue({ kind: "text", toolCalls: [{ name: "patient", arguments: "{}" }] }, { kind: "text", text: "ok" });
    const id = await h.createSession();
    const events = await h.send(id, "wait");
    const progress = events.filter((e) => e.event === "tool.progress");
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]!.data).toMatchObject({ tool: "patient", message: "still running" });
  });

  test("a second message while a turn runs answers 409 session_busy", async () => {
    const hang = { started: 0, aborted: 0 };
    h = await startHarness({ tools: [hangingTool("wait", 60_000, hang)] });
    h.upstream.enqueue({ kind: "text", toolCalls: [{ name: "wait", arguments: "{}" }] }, { kind: "text", text: "stopped" });
    const id = await h.createSession();
    const first = h.send(id, "wait");
    await waitFor("the tool to start", () => hang.started === 1);
    const second = await h.api(`/api/sessions/${id}/messages`, { json: { content: "again" } });
    expect(second.status).toBe(409);
    expect(((await second.json()) as any).error.code).toBe("session_busy");
    const cancel = await h.api(`/api/sessions/${id}/cancel`, { method: "POST" });
    expect(((await cancel.json()) as any).cancelled).toBe(true);
    const events = await first;
    expect(events.at(-1)!.data.reason).toBe("cancelled");
    expect(events.find((e) => e.event === "tool.end")!.data.outcome).toBe("cancelled");
    expect(hang.aborted).toBe(1);
  });

  test("bad requests answer JSON errors", async () => {
    h = await startHarness();
    expect((await h.api("/api/sessions/ses_nope")).status).toBe(404);
    const bad = await h.api("/api/sessions", { json: { target: "mars" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.code).toBe("unknown_target");
    const id = await h.createSession();
    const empty = await h.api(`/api/sessions/${id}/messages`, { json: { content: "" } });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as any).error).toMatchObject({ code: "invalid_request", type: "invalid_request_error" });
  });
});

describe("finished sessions", () => {
  test("hold no debug file open", async () => {
    h = await startHarness();
    const openSidecars = () =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).endsWith(".debug.jsonl");
        } catch {
          return false; // the fd closed while we looked
        }
      }).length;
    for (let i = 0; i < 12; i++) {
      h.upstream.enqueue({ kind: "text", text: `answer ${i}` });
      const id = await h.createSession();
      const events = await h.send(id, "hello");
      expect(events.at(-1)!.event).toBe("turn.end");
    }
    // Each sidecar is written in the background; once every one holds its turn.end, none may stay open.
    const written = () =>
      readdirSync(join(h!.dataDir, "debug")).filter((name) =>
        readFileSync(join(h!.dataDir, "debug", name), "utf8").includes('"kind":"turn.end"'),
      ).length;
    await waitFor("every sidecar to hold its turn.end", () => written() === 12 || undefined);
    await waitFor("debug files to close", () => openSidecars() === 0 || undefined);
    expect(openSidecars()).toBe(0);
  });
});
