import type { ToolContext, ToolTarget } from "../core/tools/toolDefinition.ts";
import { readTextLines, writeTextFile, type FileAccess, type TextReadRequest } from "../files/index.ts";
import type { CloseSessionArgs, ExecCommandArgs, WriteStdinArgs } from "../pty/index.ts";
import { HopError } from "./hopErrors.ts";
import type { HopManager } from "./hopManager.ts";

/**
 * A session target that runs already-validated tool calls on a hop's host, with the same
 * semantics as locally. The client is looked up per call, so a reconnect or re-open is picked up.
 */
export function createHopToolTarget(manager: HopManager, name: string, options: { readFileMaxBytes: number }): ToolTarget {
  return {
    name,
    async execute(toolName: string, args: unknown, ctx: ToolContext): Promise<unknown> {
      const client = manager.client(name);
      const files: FileAccess = { read: (a) => client.readFile(a, ctx.signal), write: (a) => client.writeFile(a, ctx.signal) };
      switch (toolName) {
        case "exec_command":
          return client.exec(args as ExecCommandArgs, ctx.signal, ctx.privileged ?? false);
        case "write_stdin":
          return client.writeStdin(args as WriteStdinArgs, ctx.signal);
        case "list_sessions":
          return { sessions: await client.listSessions(ctx.signal) };
        case "close_session":
          return client.closeSession(args as CloseSessionArgs, ctx.signal);
        case "read_file":
          return readTextLines(files, args as TextReadRequest, options.readFileMaxBytes);
        case "write_file":
          return writeTextFile(files, args as { path: string; content: string; create_dirs: boolean });
        default:
          throw new HopError("hop_remote_error", `Tool ${toolName} does not run on hops; switch back with hop({target:"local"}) to use it`);
      }
    },
  };
}
