import { LOCAL_TARGET, type ToolContext, type ToolDefinition, type ToolTarget } from "../core/tools/toolDefinition.ts";

/** Runs the tool definitions in this process; tells them how to move their session to another target. */
export class LocalToolTarget implements ToolTarget {
  readonly name = LOCAL_TARGET;
  constructor(
    private readonly tools: ReadonlyMap<string, ToolDefinition>,
    private readonly switchTarget: (sessionId: string, target: ToolTarget | typeof LOCAL_TARGET) => void,
  ) {}

  execute(toolName: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    const tool = this.tools.get(toolName);
    if (!tool) return Promise.reject(new Error(`tool ${toolName} is not available on ${this.name}`));
    const { sessionId } = ctx;
    return tool.execute(args, sessionId ? { ...ctx, switchTarget: (target) => this.switchTarget(sessionId, target) } : ctx);
  }
}
