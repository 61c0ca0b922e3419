import { describe, expect, test } from "bun:test";
import type { DirectCallAnswer } from "../../src/agent/index.ts";
import { waitFor } from "../support/waitFor.ts";
import { harnessPerTest } from "./agentHarness.ts";
import { fakeExecTool } from "./testTools.ts";

const harness = harnessPerTest();

const toolResults = (body: any): Array<[string, string]> =>
  (body.messages as any[]).filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m.content]);
const sudoCall = (id: string) => ({ id, name: "exec_command", arguments: JSON.stringify({ cmd: `sudo systemctl restart app${id}` }) });

describe("approvals.max_pending_per_session", () => {
  test("defaults to 20", async () => {
    const { approvalsConfigSchema } = await import("../../src/agent/index.ts");
    expect(approvalsConfigSchema().parse({}).max_pending_per_session).toBe(20);
    expect(() => approvalsConfigSchema().parse({ max_pending_per_session: 0 })).toThrow();
  });

  test("one model answer asking past the limit: the rest fail at once with a tool error the model reads, nothing queued", async () => {
    const ran: string[] = [];
    const h = await harness({ tools: [fakeExecTool(ran)], approvals: { max_pending_per_session: 3 } });
    const ids = Array.from({ length: 8 }, (_, i) => `c${i}`);
    h.upstream.enqueue({ kind: "text", toolCalls: ids.map(sudoCall) }, { kind: "text", text: "done" });
    const session = await h.createSession();
    const required = (await h.send(session, "restart everything")).at(-1)!;
    expect(required.event).toBe("approval_required");
    expect(required.data.approvals.map((a: any) => a.call_id)).toEqual(["c0", "c1", "c2"]);
    expect(h.agent.pendingApprovals()).toHaveLength(3);
    expect(h.db.query("SELECT COUNT(*) AS n FROM agent_approvals").get()).toEqual({ n: 3 });

    const detail = (await (await h.api(`/api/sessions/${session}`)).json()) as any;
    const refused = detail.tool_calls.filter((call: any) => call.outcome === "error");
    expect(refused.map((call: any) => call.call_id)).toEqual(["c3", "c4", "c5", "c6", "c7"]);
    expect(refused.every((call: any) => call.error_code === "too_many_pending_approvals" && call.approval_id === null)).toBe(true);

    for (const approval of required.data.approvals) {
      const decided = await h.api(`/api/approvals/${approval.approval_id}`, { json: { decision: "allow_once" } });
      expect(decided.status).toBe(200);
    }
    const rest = await h.follow(session, Number(required.id));
    expect(rest.at(-1)!.data.reason).toBe("stop");
    expect(ran).toEqual(["sudo systemctl restart appc0", "sudo systemctl restart appc1", "sudo systemctl restart appc2"]);

    // The model gets an answer for every call, in its order; the refused ones say why and what to do.
    const results = toolResults(h.upstream.completionRequests()[1]!.body);
    expect(results.map(([callId]) => callId).sort()).toEqual([...ids].sort());
    const error = JSON.parse(results.find(([callId]) => callId === "c5")![1]).error;
    expect(error.code).toBe("too_many_pending_approvals");
    expect(error.message).toContain("3 calls of this session already wait");
    expect(error.message).toContain("Wait until the pending calls are decided");
  });

  test("an MCP client's calls past the limit fail at once with the same code; decided ones free a place", async () => {
    const ran: string[] = [];
    const h = await harness({ tools: [fakeExecTool(ran)], approvals: { max_pending_per_session: 2 } });
    const session = h.agent.calls.openSession({ name: "test-client", version: "1" });
    const call = (n: number) =>
      h.agent.calls.call({
        sessionId: session.id,
        tool: "exec_command",
        args: { cmd: `sudo systemctl restart app${n}` },
        signal: new AbortController().signal,
        progress: () => {},
      });
    const first = call(1);
    const second = call(2);
    await waitFor("two pending approvals", () => h.agent.pendingApprovals().length === 2);
    const third: DirectCallAnswer = await call(3).answer;
    expect(third.status).toBe("finished");
    expect(third.outcome).toBe("error");
    expect(third.approval_id).toBeNull();
    expect(JSON.parse(third.content!).error).toMatchObject({ code: "too_many_pending_approvals" });
    expect(h.agent.pendingApprovals()).toHaveLength(2);

    const [pending] = h.agent.pendingApprovals();
    expect((await h.api(`/api/approvals/${pending!.id}`, { json: { decision: "deny" } })).status).toBe(200);
    const fourth = call(4);
    await waitFor("the fourth call's approval", () => h.agent.pendingApprovals().some((a) => a.summary.includes("app4")));
    expect(h.agent.pendingApprovals()).toHaveLength(2);
    expect(ran).toEqual([]);
    for (const approval of h.agent.pendingApprovals())
      expect((await h.api(`/api/approvals/${approval.id}`, { json: { decision: "allow_once" } })).status).toBe(200);
    const answers = await Promise.all([first.answer, second.answer, fourth.answer]);
    expect(answers.map((answer) => answer.outcome).sort()).toEqual(["denied", "ok", "ok"]);
    expect(ran.sort()).toEqual(["sudo systemctl restart app2", "sudo systemctl restart app4"].sort());
  });
});
