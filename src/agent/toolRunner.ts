import { AgentdError, errorMessage } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import type { ToolDefinition, ToolTarget } from "../core/tools/toolDefinition.ts";
import type { ToolCallOutcome, ToolCallStore } from "./toolCallStore.ts";
import { clipToolResult, toolResultText } from "./toolResultText.ts";
import { redactText } from "../core/redaction/index.ts";
import type { ToolErrorBody } from "./toolArguments.ts";

/** What a turn gives the runner to report through: stored events and the sidecar. */
export interface TurnReporter {
  event(type: "tool.start" | "tool.progress" | "tool.end", data: Record<string, unknown>): void;
  sidecar(kind: string, fields: Record<string, unknown>): void;
}

export interface ToolRun {
  recordId: string;
  callId: string;
  sessionId: string;
  tool: ToolDefinition;
  args: unknown;
  /** Redacted arguments, for events and logs. */
  shownArgs: unknown;
  target: ToolTarget;
  signal: AbortSignal;
  /** Allowed in the sudo scope and a bare escalation: its argv starts without no_new_privs. */
  privilegedArgv?: readonly string[];
}

export interface ToolRunOptions {
  store: ToolCallStore;
  logger: Logger;
  progressIntervalMs: number;
  resultMaxBytes: number;
}

export interface ToolRunResult {
  outcome: ToolCallOutcome;
  /** The tool message content for the model. */
  content: string;
}

/** The content the model gets for a call that did not produce a result. */
export function errorContent(error: ToolErrorBody): string {
  return JSON.stringify({ error });
}

/**
 * Runs one validated tool call on its target with a timeout, progress ticks and cancellation,
 * and records it at start and end (store, log line, event, sidecar) whatever happens.
 */
export async function runToolCall(run: ToolRun, options: ToolRunOptions, report: TurnReporter): Promise<ToolRunResult | undefined> {
  if (!options.store.start(run.recordId)) return undefined;
  const { tool, callId } = run;
  const started = performance.now();
  const base = { session: run.sessionId, tool: tool.name, call_id: callId };
  options.logger.info("tool.start", { ...base, target: run.target.name });
  report.event("tool.start", { call_id: callId, tool: tool.name, arguments: run.shownArgs, target: run.target.name });
  report.sidecar("tool.start", {
    call_id: callId,
    tool: tool.name,
    arguments: run.shownArgs,
    target: run.target.name,
    timeout_ms: tool.timeoutMs,
  });

  const controller = new AbortController();
  const onTurnAbort = () => controller.abort(run.signal.reason);
  run.signal.addEventListener("abort", onTurnAbort, { once: true });
  let lastProgress = performance.now();
  const progress = (message: string, fields?: Record<string, unknown>) => {
    lastProgress = performance.now();
    report.event("tool.progress", { call_id: callId, tool: tool.name, elapsed_ms: Math.round(lastProgress - started), message, ...fields });
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

  const outputBytes = Buffer.byteLength(content);
  const clipped = clipToolResult(content, options.resultMaxBytes);
  const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
  options.store.finish(run.recordId, { outcome, durationMs, outputBytes, errorCode: error?.code, errorMessage: error?.message });
  const fields = { ...base, outcome, duration_ms: durationMs, output_bytes: outputBytes, error: error?.message };
  if (outcome === "ok") options.logger.info("tool.end", fields);
  else options.logger.warn("tool.end", { ...fields, error_code: error?.code });
  report.event("tool.end", {
    call_id: callId,
    tool: tool.name,
    outcome,
    duration_ms: durationMs,
    output_bytes: outputBytes,
    ...(error ? { error } : {}),
    preview: redactText(clipToolResult(content, 2000).text),
  });
  report.sidecar("tool.end", {
    call_id: callId,
    tool: tool.name,
    outcome,
    duration_ms: durationMs,
    output_bytes: outputBytes,
    error,
    result: clipped.text,
  });
  return { outcome, content: clipped.text };
}
