import { afterEach, describe, expect, test } from "bun:test";
import type { ApprovalView, SessionTranscript, ToolCallRecord } from "../../src/agent/index.ts";
import { buildHealthDocument } from "../../src/core/health/index.ts";
import { baseMigrations, openStore, type Database } from "../../src/core/store/index.ts";
import { createApp } from "../../src/http/app.ts";
import { statusPageMounts } from "../../src/status/statusMounts.ts";
import type { ApprovalRow } from "../../src/status/statusSnapshot.ts";
import { createStatusSource } from "../../src/status/statusSource.ts";
import { renderTranscriptText } from "../../src/status/transcriptText.ts";
import { transcriptEntries } from "../../src/status/transcriptView.ts";
import { IncidentStore } from "../../src/watchdog/index.ts";
import { appDeps } from "../http/appHarness.ts";

const ESC = "\u001b";

const call = (over: Partial<ToolCallRecord>): ToolCallRecord => ({
  id: "tc_1",
  session_id: "s_1",
  turn_id: "t_1",
  step: 1,
  ordinal: 0,
  call_id: "c1",
  tool: "exec_command",
  scope: "exec",
  arguments: { cmd: "make" },
  status: "finished",
  outcome: "ok",
  approval_id: null,
  created_at: 2000,
  started_at: 2000,
  ended_at: 2400,
  duration_ms: 400,
  output_bytes: 10,
  error_code: null,
  error_message: null,
  ...over,
});

/** One exec call that ran and exited 1 with coloured output, one denied call, one still waiting. */
function transcript(): SessionTranscript {
  const result = (id: string, content: string) => ({ role: "tool", tool_call_id: id, content });
  return {
    session: {
      id: "s_1",
      created_at: 1000,
      updated_at: 3000,
      model: "m",
      target: "local",
      policy: {},
      title: "deploy",
      state: "awaiting_approval",
      kind: "agent",
      client: null,
    },
    messages: [
      { id: 1, turn_id: "t_1", role: "user", body: { role: "user", content: "deploy" }, ts: 1000 },
      {
        id: 2,
        turn_id: "t_1",
        role: "assistant",
        body: { role: "assistant", content: "", tool_calls: [{ id: "c1" }, { id: "c2" }, { id: "c3" }] },
        ts: 1900,
      },
      {
        id: 3,
        turn_id: "t_1",
        role: "tool",
        body: result("c1", JSON.stringify({ output: `${ESC}[1;31merror:${ESC}[0m no rule\r\n${ESC}]0;title${ESC}\\done`, exit_code: 1 })),
        ts: 2400,
      },
      { id: 4, turn_id: "t_1", role: "tool", body: result("c2", "denied by the operator"), ts: 2500 },
    ],
    tool_calls: [
      call({}),
      call({ id: "tc_2", call_id: "c2", outcome: "denied", ordinal: 1 }),
      call({
        id: "tc_3",
        call_id: "c3",
        status: "awaiting_approval",
        outcome: null,
        ordinal: 2,
        arguments: { cmd: "sudo systemctl restart web" },
      }),
    ],
    approvals: [] as ApprovalView[],
  };
}

describe("a failed call is called failed", () => {
  test("exit 1 under outcome ok: result failed; a denied call did not run, so it did not fail", () => {
    const calls = transcriptEntries(transcript()).flatMap((e) => (e.type === "tool_call" ? [e.detail] : []));
    expect(calls.map((c) => [c.result, c.failed])).toEqual([
      ["failed", true],
      ["denied", false],
      ["awaiting_approval", false],
    ]);
  });

  test("colour codes, OSC titles and CRLF are gone from the output tail, the words stay", () => {
    const first = transcriptEntries(transcript()).find((e) => e.type === "tool_call");
    const tail = first?.type === "tool_call" ? first.detail.output_tail : null;
    expect(tail).toBe("error: no rule\ndone");
  });

  test("the curl view marks the failed call ✗ failed exit 1 and prints no escape", () => {
    const text = renderTranscriptText(transcript(), 5000);
    expect(text).toContain("✗ exec_command  failed exit 1");
    expect(text).toContain("– exec_command  denied");
    expect(text).not.toContain(ESC);
  });
});

describe("the transcript page", () => {
  const stores: Database[] = [];
  afterEach(() => {
    for (const db of stores.splice(0)) db.close();
  });

  function page(approvals: ApprovalRow[]) {
    const db = openStore({ path: ":memory:", migrations: baseMigrations });
    stores.push(db);
    const source = createStatusSource({
      incidents: new IncidentStore(db),
      health: async () => buildHealthDocument({ version: "1", checks: [], notes: [], uptimeS: 1, memoryMb: 1, requestsTotal: 0 }),
      worker: () => ({ pid: 1, supervisor_pid: null, version: "1", uptime_s: 1, restarts: 0, memory_mb: 1 }),
      transcript: () => transcript(),
      approvals: () => approvals,
    });
    const { app } = createApp(appDeps({ mounts: statusPageMounts(source, {}).mounts }));
    return async (path: string) => (await app.request(path, { headers: { accept: "text/html" } })).text();
  }

  const waiting: ApprovalRow = {
    id: "ap_9",
    kind: "agent",
    requested_by: "the agent",
    session_id: "s_1",
    tool: "exec_command",
    scope: "sudo",
    summary: "sudo systemctl restart web",
    requested_at: 2600,
    command: "sudo systemctl restart web",
    digest: "d".repeat(64),
  };
  const elsewhere: ApprovalRow = { ...waiting, id: "ap_other", session_id: "s_2", summary: "rm -rf /tmp/x" };

  test("a red pill that says failed beside exit 1, never ok; no raw escape anywhere", async () => {
    const html = await page([])("/status/sessions/s_1");
    expect(html).toMatch(
      /data-result="failed"[^>]*>.*?<span class="pill tone-fail">failed<\/span> <span data-field="exit-code">exit 1<\/span>/s,
    );
    expect(html).not.toContain(ESC);
    expect(html).toContain("error: no rule");
    expect(html).not.toContain('data-field="waiting"');
  });

  test("while the session waits: this session's approvals with the queue's decide buttons, another session's not", async () => {
    const get = page([waiting, elsewhere]);
    for (const path of ["/status/sessions/s_1", "/status/sessions/s_1/fragment"]) {
      const html = await get(path);
      expect(html).toContain('data-field="waiting"');
      expect(html).toContain('action="/status/approvals/ap_9/decide"');
      expect(html).toContain('<button type="submit" name="decision" value="allow_once">');
      expect(html).toContain(`<input type="hidden" name="digest" value="${"d".repeat(64)}"/>`);
      expect(html).not.toContain("ap_other");
    }
  });
});
