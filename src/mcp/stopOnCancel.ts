import type { ToolTarget } from "../agent/index.ts";
import type { Logger } from "../core/log/index.ts";
import { runInBackground } from "../core/process/index.ts";

/** Tools whose cancelled call leaves a command running in a PTY session. */
const STARTS_OR_DRIVES_COMMAND = new Set(["exec_command", "write_stdin"]);

/**
 * A target on which a cancelled exec_command or write_stdin also stops the command: the PTY call
 * returns once its wait is aborted, naming the session; that session's process group is then
 * killed (close_session with force). The agent's own turns keep their commands, as before.
 */
export function stopOnCancel(target: ToolTarget, logger: Logger): ToolTarget {
  return {
    name: target.name,
    execute(toolName, args, ctx) {
      const pending = target.execute(toolName, args, ctx);
      if (!STARTS_OR_DRIVES_COMMAND.has(toolName)) return pending;
      ctx.signal.addEventListener(
        "abort",
        () =>
          runInBackground(
            "mcp.stop_cancelled",
            async () => {
              const result = (await pending) as { session_id?: unknown; running?: unknown };
              if (typeof result?.session_id !== "string" || result.running !== true) return;
              await target.execute(
                "close_session",
                { session_id: result.session_id, force: true },
                { signal: AbortSignal.timeout(30_000), progress: () => {} },
              );
              logger.info("mcp.command_stopped", { tool: toolName, target: target.name, pty_session: result.session_id });
            },
            { tool: toolName },
            logger,
          ),
        { once: true },
      );
      return pending;
    },
  };
}
