import { defineTool, ToolError, type ToolDefinition } from "../core/tools/toolDefinition.ts";
import type { PtyManager } from "./ptyManager.ts";
import { PtyError } from "./ptyErrors.ts";
import { closeSessionArgs, execCommandToolArgs, listSessionsArgs, writeStdinToolArgs } from "./ptySchemas.ts";

// The slowest call waits the longest yield (30 s) or a close's three grace periods; this leaves headroom.
const TOOL_TIMEOUT_MS = 60_000;

/** PTY failures reach the model as tool errors it can act on (a wrong id, the limit), with the same code. */
async function asToolError<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof PtyError) throw new ToolError(error.code, error.message, error.details);
    throw error;
  }
}

/** exec_command, write_stdin, list_sessions and close_session, backed by `manager`. */
export function createPtyTools(manager: PtyManager): ToolDefinition[] {
  return [
    defineTool({
      name: "exec_command",
      description:
        "Run a shell command in a new pseudo-terminal. Returns its output once it exits, or after yield_time_ms with a session_id " +
        "to keep talking to it (write_stdin) when it is still running (REPLs, prompts, long builds).",
      parameters: execCommandToolArgs,
      scope: "exec",
      hostBound: true,
      timeoutMs: TOOL_TIMEOUT_MS,
      execute: (args, ctx) =>
        asToolError(() =>
          manager.exec(args, ctx.signal, {
            privileged: ctx.privileged ?? false,
            ...(ctx.privilegedArgv ? { argv: ctx.privilegedArgv } : {}),
            ...(ctx.privilegedArgv && ctx.recordId && ctx.sessionId ? { call: { recordId: ctx.recordId, sessionId: ctx.sessionId } } : {}),
          }),
        ),
    }),
    defineTool({
      name: "write_stdin",
      description:
        "Type characters into a running session and return the output produced since the last read. " +
        "Control characters work: \\u0003 is Ctrl-C, \\u0004 is Ctrl-D. Empty chars only reads.",
      parameters: writeStdinToolArgs,
      scope: "exec",
      hostBound: true,
      timeoutMs: TOOL_TIMEOUT_MS,
      inputReader: (args) => manager.inputReader(args.session_id),
      execute: (args, ctx) => asToolError(() => manager.writeStdin(args, ctx.signal)),
    }),
    defineTool({
      name: "list_sessions",
      description: "List the open PTY sessions: id, command, pid, start time, whether it runs, idle seconds, bytes of output.",
      parameters: listSessionsArgs,
      scope: "exec",
      hostBound: true,
      timeoutMs: 5_000,
      execute: async () => ({ sessions: manager.list() }),
    }),
    defineTool({
      name: "close_session",
      description: "Close a PTY session: SIGHUP, then SIGTERM, then SIGKILL to its whole process group (force: SIGKILL at once).",
      parameters: closeSessionArgs,
      scope: "exec",
      hostBound: true,
      timeoutMs: TOOL_TIMEOUT_MS,
      execute: (args) => asToolError(() => manager.closeSession(args)),
    }),
  ] as ToolDefinition[];
}
