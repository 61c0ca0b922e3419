import { z } from "zod";
import { defineTool, ToolError, type ToolDefinition } from "../../src/agent/index.ts";

/** Tools for the agent tests; each keeps a log of what it was called with. */
export function echoTool(calls: unknown[] = []): ToolDefinition {
  return defineTool({
    name: "echo",
    description: "Echo the text back",
    parameters: z.strictObject({ text: z.string() }),
    scope: "read",
    timeoutMs: 10_000,
    async execute(args) {
      calls.push(args);
      return { echoed: args.text };
    },
  }) as ToolDefinition;
}

/** Stands in for exec_command until the PTY tools are wired: records the command, runs nothing. */
export function fakeExecTool(ran: string[] = []): ToolDefinition {
  return defineTool({
    name: "exec_command",
    description: "Run a command",
    parameters: z.strictObject({ cmd: z.string() }),
    scope: "exec",
    timeoutMs: 10_000,
    async execute(args) {
      ran.push(args.cmd);
      return { output: `ran ${args.cmd}`, exit_code: 0 };
    },
  }) as ToolDefinition;
}

export const failingTool = defineTool({
  name: "boom",
  description: "Always fails",
  parameters: z.strictObject({}),
  scope: "read",
  timeoutMs: 10_000,
  async execute() {
    throw new ToolError("disk_full", "the disk is on fire");
  },
}) as ToolDefinition;

/** Never finishes on its own; reports whether it saw its abort signal. */
export function hangingTool(name: string, timeoutMs: number, state: { started: number; aborted: number }): ToolDefinition {
  return defineTool({
    name,
    description: "Hangs until stopped",
    parameters: z.strictObject({}),
    scope: "read",
    timeoutMs,
    execute(_args, ctx) {
      state.started++;
      return new Promise((_resolve, reject) => {
        ctx.signal.addEventListener("abort", () => {
          state.aborted++;
          reject(new Error("stopped"));
        });
      });
    },
  }) as ToolDefinition;
}
