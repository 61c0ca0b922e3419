import { z } from "zod";
import { defineTool, LOCAL_TARGET, ToolError, type ToolDefinition } from "../core/tools/toolDefinition.ts";
import type { HopManager } from "./hopManager.ts";
import { createHopToolTarget } from "./hopToolTarget.ts";

const hopParameters = z.strictObject({
  target: z.string().min(1).describe(`A hop's name (see "agentd hops"), or "${LOCAL_TARGET}" to come back to this host`),
});

/**
 * `hop`: switches the session's host. exec_command, write_stdin, list_sessions, close_session,
 * read_file and write_file then run there until the session hops again.
 */
export function createHopTool(manager: HopManager, options: { readFileMaxBytes: number }): ToolDefinition<typeof hopParameters> {
  const openHops = () =>
    manager
      .list()
      .filter((hop) => hop.state !== "closed")
      .map((hop) => hop.name);
  return defineTool({
    name: "hop",
    description: `Switch this session to another host reached over SSH (a hop opened with "agentd hop"), or back to "${LOCAL_TARGET}". Terminal and file tools then run on that host.`,
    parameters: hopParameters,
    scope: "hop",
    timeoutMs: 10_000,
    async execute(args, ctx) {
      if (!ctx.sessionId || !ctx.switchTarget) throw new ToolError("no_session", "hop only works inside an agent session");
      if (args.target === LOCAL_TARGET) {
        ctx.switchTarget(LOCAL_TARGET);
        return { target: LOCAL_TARGET };
      }
      if (!openHops().includes(args.target)) {
        throw new ToolError(
          "hop_not_found",
          `No hop named ${args.target}; open hops: ${openHops().join(", ") || "none"} (open one with agentd hop user@host)`,
        );
      }
      ctx.switchTarget(createHopToolTarget(manager, args.target, options));
      return { target: args.target, ...manager.get(args.target) };
    },
  });
}
