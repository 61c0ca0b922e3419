import { AgentdError, errorMessage } from "../core/errors/index.ts";
import type { ToolDefinition, ToolTarget } from "../core/tools/toolDefinition.ts";
import type { ToolCallOutcome } from "./toolCallStore.ts";
import { toolResultText } from "./toolResultText.ts";
import type { ToolErrorBody } from "./toolArguments.ts";

export interface ToolRun {
  recordId: string;
  callId: string;
  sessionId: string;
  tool: ToolDefinition;
  args: unknown;
  target: ToolTarget;
  signal: AbortSignal;
  /** Allowed in the sudo scope and a bare escalation: its argv starts without no_new_privs. */
  privilegedArgv?: readonly string[];
}

export interface ToolRunOptions {
  progressIntervalMs: number;
  /** The tool's own progress, and "still running" when it is silent for an interval. */
  progress(message: string, fields: Record<string, unknown> & { elapsed_ms: number }): void;
}

export interface ToolRunResult {
  outcome: ToolCallOutcome;
  /** The whole result text (or `{"error": …}`), before it is clipped for the model. */
  content: string;
  error?: ToolErrorBody;
  durationMs: number;
}

/** The content the model gets for a call that did not produce a result. */
export function errorContent(error: ToolErrorBody): string {
  return JSON.stringify({ error });
}

/**
 * Runs one validated tool call on its target with a timeout, progress ticks and cancellation;
 * whatever happens it returns how the call ended. Recording it is the CallRecorder's job.
 */
export async function runToolCall(run: ToolRun, options: ToolRunOptions): Promise<ToolRunResult> {
  const { tool } = run;
  const started = performance.now();
  const controller = new AbortController();
  const onTurnAbort = () => controller.abort(run.signal.reason);
  run.signal.addEventListener("abort", onTurnAbort, { once: true });
  let lastProgress = performance.now();
  const progress = (message: string, fields?: Record<string, unknown>) => {
    lastProgress = performance.now();
    options.progress(message, { elapsed_ms: Math.round(lastProgress - started), ...fields });
  };
  const ticker = setInterval(() => {
    if (performance.now() - lastProgress >= options.progressIntervalMs * 0.9) progress("still running");
  }, options.progressIntervalMs);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stopped = new Promise<{ kind: "timeout" | "cancelled" }>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "timeout" }), tool.timeoutMs);
    if (controller.signal.aborted) resolve({ kind: "cancelled" });
    controller.signal.addEventListener("abort", () => resolve({ kind: "cancelled" }), { once: true });
  });

  let outcome: ToolCallOutcome;
  let content: string;
  let error: ToolErrorBody | undefined;
  try {
    const settled = await Promise.race([
      run.target
        .execute(tool.name, run.args, {
          signal: controller.signal,
          progress,
          sessionId: run.sessionId,
          recordId: run.recordId,
          privileged: run.privilegedArgv !== undefined,
          ...(run.privilegedArgv ? { privilegedArgv: run.privilegedArgv } : {}),
        })
        .then((value) => ({ kind: "ok" as const, value })),
      stopped,
    ]);
    if (settled.kind === "ok") {
      outcome = "ok";
      content = toolResultText(settled.value);
    } else if (settled.kind === "timeout") {
      outcome = "timeout";
      error = { code: "timeout", message: `${tool.name} did not finish within ${tool.timeoutMs} ms and was stopped` };
      content = errorContent(error);
    } else {
      outcome = "cancelled";
      error = { code: "cancelled", message: `${tool.name} was cancelled` };
      content = errorContent(error);
    }
  } catch (thrown) {
    outcome = "error";
    error =
      thrown instanceof AgentdError
        ? { code: thrown.code, message: thrown.message, ...(thrown.details ? { details: thrown.details } : {}) }
        : { code: "tool_failed", message: errorMessage(thrown) };
    content = errorContent(error);
  } finally {
    clearInterval(ticker);
    clearTimeout(timer);
    run.signal.removeEventListener("abort", onTurnAbort);
  }
  // A timed-out tool is told to stop; its late result, if any, is dropped.
  if (outcome === "timeout") controller.abort(new Error("timeout"));
  const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
  return { outcome, content, ...(error ? { error } : {}), durationMs };
}
