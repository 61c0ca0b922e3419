import { describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { createLogger } from "../../src/core/log/index.ts";
import { createErrorHandler } from "../../src/http/errorResponse.ts";
import { decisionRoutes } from "../../src/status/decisionRoutes.ts";
import { startScriptedUpstream } from "../support/scriptedUpstream.ts";
import { harnessPerTest, startHarness, type Harness } from "./agentHarness.ts";
import { fakeExecTool } from "./testTools.ts";

const harness = harnessPerTest();

const toolResults = (body: any) => (body.messages as any[]).filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m.content]);
const decide = (h: Harness, id: string, decision: string, extra: Record<string, unknown> = {}) =>
  h.api(`/api/approvals/${id}`, { json: { decision, ...extra } });

function sudoScript(h: Harness, cmd = "sudo systemctl restart nginx") {
  h.upstream.enqueue(
    { kind: "text", toolCalls: [{ id: "s1", name: "exec_command", arguments: JSON.stringify({ cmd }) }] },
    { kind: "text", text: "restarted" },
  );
}

describe("approvals", () => {
  test("sudo → approval_required → allow_once runs the command once and the turn finishes by itself", async () => {
    const ran: string[] = [];
    const h = await harness({ tools: [fakeExecTool(ran)] });
    sudoScript(h);
    const id = await h.createSession();
    const paused = await h.send(id, "restart nginx");
    const required = paused.at(-1)!;
    expect(required.event).toBe("approval_required");
    expect(required.data.approvals).toHaveLength(1);
    const approval = required.data.approvals[0];
    expect(approval).toMatchObject({
      tool: "exec_command",
      scope: "sudo",
      summary: 'exec_command "sudo systemctl restart nginx"',
      call_id: "s1",
    });
    expect(ran).toEqual([]);
    // The approver is told why it was asked in the sudo scope.
    const pending = (await (await h.api(`/api/sessions/${id}`)).json()) as { approvals: { reasons?: string[] }[] };
    expect(pending.approvals[0]!.reasons?.join(" ")).toContain("sudo");
    expect(h.agent.pendingApprovals().map((a) => a.id)).toEqual([approval.approval_id]);
    expect(h.agent.sessions().rows[0]).toMatchObject({ id, state: "awaiting_approval", pending_approvals: 1 });

    const answer = await decide(h, approval.approval_id, "allow_once");
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ approval: { status: "allow_once", decided_by: "api" }, resumed: true });
    const rest = await h.follow(id, Number(required.id));
    expect(rest.map((e) => e.event)).toEqual(["approval.decided", "tool.start", "tool.end", "text.delta", "turn.end"]);
    expect(rest.at(-1)!.data.reason).toBe("stop");
    expect(ran).toEqual(["sudo systemctl restart nginx"]);
    expect(toolResults(h.upstream.completionRequests()[1]!.body)[0]![1]).toContain("ran sudo systemctl restart nginx");

    const history = (await (await h.api(`/api/sessions/${id}`)).json()) as any;
    expect(history.approvals[0]).toMatchObject({ status: "allow_once", decided_by: "api", tool_call_id: history.tool_calls[0].id });
    expect(history.tool_calls[0]).toMatchObject({ outcome: "ok", approval_id: approval.approval_id, scope: "exec" });
    expect(history.session.state).toBe("idle");
  });

  test("a second decision answers 409 and concurrent decisions have one winner; the call runs once", async () => {
    const ran: string[] = [];
    const h = await harness({ tools: [fakeExecTool(ran)] });
    sudoScript(h);
    const id = await h.createSession();
    const approvalId = (await h.send(id, "restart")).at(-1)!.data.approvals[0].approval_id;
    const decisions = ["deny", "allow_once", "allow_once", "allow_session", "allow_once"];
    const answers = await Promise.all(decisions.map((d) => decide(h, approvalId, d)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
    const conflict = (await answers.find((r) => r.status === 409)!.json()) as any;
    expect(conflict.error.code).toBe("approval_already_decided");
    const winner = decisions[answers.findIndex((r) => r.status === 200)];
    await h.follow(id);
    expect((await decide(h, approvalId, "allow_once")).status).toBe(409);
    expect(ran).toEqual(winner === "deny" ? [] : ["sudo systemctl restart nginx"]);
    expect(h.upstream.completionRequests()).toHaveLength(2);
  });

  test("deny: the model receives the denial and the command never runs", async () => {
    const ran: string[] = [];
    const h = await harness({ tools: [fakeExecTool(ran)] });
    sudoScript(h, "sudo rm -rf /var/cache/app");
    const id = await h.createSession();
    const required = (await h.send(id, "clean cache")).at(-1)!;
    expect((await decide(h, required.data.approvals[0].approval_id, "deny", { decided_by: "cli" })).status).toBe(200);
    const rest = await h.follow(id, Number(required.id));
    expect(rest.at(-1)!.data.reason).toBe("stop");
    expect(ran).toEqual([]);
    const [callId, content] = toolResults(h.upstream.completionRequests()[1]!.body)[0]!;
    expect(callId).toBe("s1");
    expect(JSON.parse(content).error).toMatchObject({ code: "denied" });
    expect(content).toContain("denied by the user");
    const history = (await (await h.api(`/api/sessions/${id}`)).json()) as any;
    expect(history.tool_calls[0].outcome).toBe("denied");
    expect(history.approvals[0]).toMatchObject({ status: "deny", decided_by: "cli" });
  });

  test("allow_session grants the scope and releases the session's other pending calls of that scope", async () => {
    const ran: string[] = [];
    const h = await harness({ tools: [fakeExecTool(ran)] });
    h.upstream.enqueue(
      {
        kind: "text",
        toolCalls: [
          { id: "a", name: "exec_command", arguments: '{"cmd":"sudo id"}' },
          { id: "b", name: "exec_command", arguments: '{"cmd":"uptime"}' },
          { id: "c", name: "exec_command", arguments: '{"cmd":"sudo whoami"}' },
        ],
      },
      { kind: "text", toolCalls: [{ id: "d", name: "exec_command", arguments: '{"cmd":"sudo ls /root"}' }] },
      { kind: "text", text: "done" },
    );
    const id = await h.createSession();
    const required = (await h.send(id, "go")).at(-1)!;
    const pending = required.data.approvals.map((a: any) => a.call_id);
    expect(pending).toEqual(["a", "c"]);
    const answer = (await (await decide(h, required.data.approvals[0].approval_id, "allow_session")).json()) as any;
    expect(answer.released).toEqual([required.data.approvals[1].approval_id]);
    expect(answer.resumed).toBe(true);
    const rest = await h.follow(id, Number(required.id));
    expect(rest.at(-1)!.data.reason).toBe("stop");
    // The later sudo call ran without a question: the grant covers the rest of the session.
    expect(ran).toEqual(["sudo id", "uptime", "sudo whoami", "sudo ls /root"]);
    expect(rest.filter((e) => e.event === "approval_required")).toHaveLength(0);
  });

  test("policy deny and command rules decide without asking", async () => {
    const ran: string[] = [];
    const h = await harness({
      tools: [fakeExecTool(ran)],
      approvals: {
        rules: [
          { match: "rm -rf /*", action: "deny" },
          { match: "systemctl status *", action: "allow" },
        ],
        policy: { exec: "ask" },
      },
    });
    h.upstream.enqueue(
      {
        kind: "text",
        toolCalls: [
          { id: "r1", name: "exec_command", arguments: '{"cmd":"rm -rf /"}' },
          { id: "r2", name: "exec_command", arguments: '{"cmd":"systemctl   status nginx"}' },
        ],
      },
      { kind: "text", text: "ok" },
    );
    const id = await h.createSession();
    const events = await h.send(id, "go");
    expect(events.at(-1)!.data.reason).toBe("stop");
    expect(ran).toEqual(["systemctl   status nginx"]);
    const denied = toolResults(h.upstream.completionRequests()[1]!.body)[0]![1] as string;
    expect(denied).toContain("denied by policy (rule:rm -rf /*)");
  });

  test("the page's form post gets an escaped HTML fragment and is recorded as decided by the page", async () => {
    const ran: string[] = [];
    const h = await harness({ tools: [fakeExecTool(ran)] });
    // The page's buttons post to the status page's route, which calls the agent's decision.
    const statusPage = new Hono();
    statusPage.onError(createErrorHandler(createLogger("test")));
    statusPage.route("/", decisionRoutes({ approval: (id, decision, by) => h.agent.decideApproval(id, decision, by) }));
    sudoScript(h, 'sudo echo "<b>hi</b>"');
    const id = await h.createSession();
    const required = (await h.send(id, "go")).at(-1)!;
    const approvalId = required.data.approvals[0].approval_id;
    const form = {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "hx-request": "true" },
      body: "decision=allow_once",
    };
    const page = await statusPage.request(`/status/approvals/${approvalId}/decide`, form);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain("Allowed once");
    expect(html).toContain("&lt;b&gt;hi&lt;/b&gt;");
    expect(html).not.toContain("<b>");
    const twice = await statusPage.request(`/status/approvals/${approvalId}/decide`, form);
    expect(await twice.text()).toContain("already decided");
    await h.follow(id, Number(required.id));
    expect(((await (await h.api(`/api/approvals/${approvalId}`)).json()) as any).decided_by).toBe("page");
    expect(ran).toHaveLength(1);
    const bad = await h.api(`/api/approvals/${approvalId}`, { json: { decision: "maybe" } });
    expect(bad.status).toBe(400);
  });

  test("cancel while waiting for a decision closes the turn and the approval", async () => {
    const ran: string[] = [];
    const h = await harness({ tools: [fakeExecTool(ran)] });
    sudoScript(h);
    const id = await h.createSession();
    const required = (await h.send(id, "go")).at(-1)!;
    const cancel = (await (await h.api(`/api/sessions/${id}/cancel`, { method: "POST" })).json()) as any;
    expect(cancel).toMatchObject({ cancelled: true, session: { state: "idle" } });
    expect((await decide(h, required.data.approvals[0].approval_id, "allow_once")).status).toBe(409);
    expect(ran).toEqual([]);
    h.upstream.enqueue({ kind: "text", text: "fresh start" });
    const next = await h.send(id, "something else");
    expect(next.at(-1)!.data.reason).toBe("stop");
    // The cancelled call was answered, so the conversation the model sees stays valid.
    expect(toolResults(h.upstream.completionRequests()[1]!.body).map(([callId]) => callId)).toEqual(["s1"]);
  });

  test("a pending approval survives a worker restart and can be decided after it", async () => {
    const upstream = startScriptedUpstream();
    try {
      const ranBefore: string[] = [];
      const first = await startHarness({ tools: [fakeExecTool(ranBefore)], upstream });
      upstream.enqueue(
        { kind: "text", toolCalls: [{ id: "s1", name: "exec_command", arguments: '{"cmd":"sudo reboot-service"}' }] },
        { kind: "text", text: "after restart" },
      );
      const id = await first.createSession();
      const required = (await first.send(id, "restart it")).at(-1)!;
      const approvalId = required.data.approvals[0].approval_id;
      await first.close(true);

      const ranAfter: string[] = [];
      const second = await harness({ tools: [fakeExecTool(ranAfter)], upstream, dataDir: first.dataDir });
      expect(second.agent.pendingApprovals().map((a) => a.id)).toEqual([approvalId]);
      const answer = await decide(second, approvalId, "allow_once");
      expect(answer.status).toBe(200);
      const rest = await second.follow(id, Number(required.id));
      expect(rest.at(-1)!.data).toMatchObject({ reason: "stop" });
      expect(ranBefore).toEqual([]);
      expect(ranAfter).toEqual(["sudo reboot-service"]);
      expect(toolResults(upstream.completionRequests()[1]!.body)).toEqual([
        ["s1", JSON.stringify({ output: "ran sudo reboot-service", exit_code: 0 })],
      ]);
      expect((await decide(second, approvalId, "allow_once")).status).toBe(409);
    } finally {
      await upstream.close();
    }
  });
});
