import type { ToolContext, ToolDefinition } from "../core/tools/toolDefinition.ts";

/**
 * Where a session's tool calls run. "local" runs the tool definitions in this process; a hop
 * registers a target that forwards the same (already validated) call to a remote agentd.
 */
export interface ToolTarget {
  readonly name: string;
  execute(toolName: string, args: unknown, ctx: ToolContext): Promise<unknown>;
}

export const LOCAL_TARGET = "local";

export class LocalToolTarget implements ToolTarget {
  readonly name = LOCAL_TARGET;
  constructor(private readonly tools: ReadonlyMap<string, ToolDefinition>) {}

  execute(toolName: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    const tool = this.tools.get(toolName);
    if (!tool) return Promise.reject(new Error(`tool ${toolName} is not available on ${this.name}`));
    return tool.execute(args, ctx);
  }
}
