import { afterEach, expect, test } from "bun:test";
import { z } from "zod";
import { defineTool, type ToolDefinition } from "../../src/agent/index.ts";
import { LOCAL_TARGET, type ToolTarget } from "../../src/core/tools/toolDefinition.ts";
import { startHarness, type Harness } from "./agentHarness.ts";

// A sudo call approved on the host its card names runs there or not at all: a hop back to local
// between the decision and the run (the same step's calls) must not move it.

let open: Harness | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

test("a call approved for one host is not run on another after the session switched hosts", async () => {
  const ran: string[] = [];
  const elsewhere: ToolTarget = {
    name: "staging",
    execute: async (_tool, args) => {
      ran.push(`staging:${(args as { cmd: string }).cmd}`);
      return { output: "ran on staging", exit_code: 0 };
    },
  };
  const goto = defineTool({
    name: "goto",
    description: "Switch hosts",
    parameters: z.strictObject({ to: z.string() }),
    scope: "read",
    timeoutMs: 10_000,
    async execute(args, ctx) {
      ctx.switchTarget?.(args.to === LOCAL_TARGET ? LOCAL_TARGET : elsewhere);
      return { on: args.to };
    },
  }) as ToolDefinition;
  const exec = defineTool({
    name: "exec_command",
    description: "Run a command",
    parameters: z.strictObject({ cmd: z.string() }),
    scope: "exec",
    timeoutMs: 10_000,
    hostBound: true,
    async execute(args) {
      ran.push(`local:${args.cmd}`);
      return { output: "ran locally", exit_code: 0 };
    },
  }) as ToolDefinition;
  const h = await startHarness({ tools: [goto, exec] });
  open = h;
  const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });
  h.upstream.enqueue(
    { kind: "text", toolCalls: [call("g1", "goto", { to: "staging" })] },
    {
      kind: "text",
      toolCalls: [
        call("a", "exec_command", { cmd: "sudo id" }),
        call("g2", "goto", { to: LOCAL_TARGET }),
        call("b", "exec_command", { cmd: "sudo id" }),
      ],
    },
    { kind: "text", text: "done" },
  );
  const id = await h.createSession();
  const paused = await h.send(id, "check the user on staging");
  const asked = paused.at(-1)!.data.approvals as { approval_id: string }[];
  expect(asked).toHaveLength(2);
  const view = (await (await h.api(`/api/sessions/${id}`)).json()) as { approvals: { target?: string }[] };
  expect(view.approvals.map((a) => a.target)).toEqual(["staging", "staging"]);
  for (const approval of asked) await h.api(`/api/approvals/${approval.approval_id}`, { json: { decision: "allow_once" } });
  await h.follow(id);
  expect(ran).toEqual(["staging:sudo id"]);
  const body = (await (await h.api(`/api/sessions/${id}`)).json()) as {
    messages: { role: string; body: { tool_call_id?: string; content?: string } }[];
  };
  expect(body.messages.find((m) => m.role === "tool" && m.body.tool_call_id === "b")?.body.content).toContain("target_changed");
});
