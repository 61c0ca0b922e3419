import { AgentdError } from "../core/errors/index.ts";
import type { ToolTarget } from "../core/tools/toolDefinition.ts";
import type { ToolCallOutcome, ToolCallRecord } from "./toolCallStore.ts";

/** A call an MCP client makes itself: no model, the same policy, approvals, runner and records. */
export interface DirectCallRequest {
  sessionId: string;
  tool: string;
  /** The client's arguments; for a host-bound tool, `target` ("local" or a hop's name) is taken off first. */
  args: Record<string, unknown>;
  /** Aborting it cancels the call: a pending approval is cancelled, a running tool is told to stop. */
  signal: AbortSignal;
  /** Progress while the call waits for a decision or runs. */
  progress(message: string, fields?: Record<string, unknown>): void;
  /** Wraps the target the call runs on (MCP stops a cancelled command's process group through it). */
  wrapTarget?: (target: ToolTarget) => ToolTarget;
}

export interface DirectCallAnswer {
  call_id: string;
  tool: string;
  status: ToolCallRecord["status"];
  outcome: ToolCallOutcome | null;
  /** The result, or `{"error": …}`, as the agent's model would read it (clipped). Set once finished. */
  content?: string;
  approval_id: string | null;
}

export class UnknownToolError extends AgentdError {
  constructor(name: string, known: Iterable<string>) {
    super("unknown_tool", `There is no tool named ${name}; available: ${[...known].join(", ")}`);
  }
}

export class CallNotFoundError extends AgentdError {
  constructor(callId: string) {
    super("call_not_found", `No call with id ${callId}`);
  }
}
