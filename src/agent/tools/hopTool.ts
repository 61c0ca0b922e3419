import { z } from "zod";
import { LOCAL_TARGET, type ToolTarget } from "../toolTarget.ts";
import { defineTool, ToolError, type ToolDefinition } from "../../core/tools/toolDefinition.ts";

/** What the agent needs of the hop capability: a target per open hop, and what to tell the model. */
export interface HopTargets {
  /** Throws a clear error (unknown or closed hop) the model can read. */
  target(name: string): ToolTarget;
  describe(name: string): Record<string, unknown>;
  names(): string[];
}

export const hopParameters = z.strictObject({
  target: z.string().min(1).describe(`A hop's name (see "agentd hops"), or "${LOCAL_TARGET}" to come back to this host`),
});

/**
 * `hop`: switches the session's host. exec_command, write_stdin, list_sessions, close_session,
 * read_file and write_file then run there until the session hops again.
 */
export function createHopTool(
  hops: HopTargets,
  session: { switchTo(sessionId: string, target: ToolTarget | typeof LOCAL_TARGET): void },
): ToolDefinition<typeof hopParameters> {
  return defineTool({
    name: "hop",
    description: `Switch this session to another host reached over SSH (a hop opened with "agentd hop"), or back to "${LOCAL_TARGET}". Terminal and file tools then run on that host.`,
    parameters: hopParameters,
    scope: "hop",
    timeoutMs: 10_000,
    async execute(args, ctx) {
      if (!ctx.sessionId) throw new ToolError("no_session", "hop only works inside an agent session");
      if (args.target === LOCAL_TARGET) {
        session.switchTo(ctx.sessionId, LOCAL_TARGET);
        return { target: LOCAL_TARGET };
      }
      if (!hops.names().includes(args.target)) {
        throw new ToolError(
          "hop_not_found",
          `No hop named ${args.target}; open hops: ${hops.names().join(", ") || "none"} (open one with agentd hop user@host)`,
        );
      }
      session.switchTo(ctx.sessionId, hops.target(args.target));
      return { target: args.target, ...hops.describe(args.target) };
    },
  });
}
