import type { z } from "zod";
import { AgentdError, type ErrorCode } from "../errors/index.ts";

/** What a tool may do, for approvals: each scope has a policy (allow | ask | deny). */
export type ToolScope = "read" | "exec" | "fs_write" | "hop" | "sudo" | "service_control";

export interface ToolContext {
  signal: AbortSignal;
  /** Long calls report progress at least every few seconds; the agent forwards it as tool.progress. */
  progress(message: string, fields?: Record<string, unknown>): void;
  sessionId?: string;
  /** The agent's record of this call (agent_tool_calls.id): where its approval is found. */
  recordId?: string;
  /**
   * True only for a call approved in the `sudo` scope: it may start programs that raise privileges.
   * Every other command is started with no_new_privs, so the kernel refuses setuid escalation.
   */
  privileged?: boolean;
  /** With `privileged`: the bare escalation's words, exec'd as they are (no shell) in a fixed environment. */
  privilegedArgv?: readonly string[];
  /** Points the calling session's host-bound tools at another target; set by the agent (the hop tool uses it). */
  switchTarget?(target: ToolTarget | typeof LOCAL_TARGET): void;
}

/**
 * Where a session's tool calls run. "local" runs the tool definitions in this process; a hop
 * provides a target that forwards the same (already validated) call to its host.
 */
export interface ToolTarget {
  readonly name: string;
  execute(toolName: string, args: unknown, ctx: ToolContext): Promise<unknown>;
}

export const LOCAL_TARGET = "local";

/** The program that reads what a call types into a terminal (its foreground process), when known. */
export interface InputReader {
  /** Its command name, as /proc/<pid>/comm has it (bash, python3, vim). */
  comm: string;
  /** True when the terminal's command was started without no_new_privs (a sudo-approved call). */
  privileged: boolean;
  /** The command the terminal was opened with, for the approver. */
  command?: string;
}

export interface ToolDefinition<Schema extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  parameters: Schema;
  scope: ToolScope;
  timeoutMs: number;
  /** Runs on the session's current host (local or a hop); other tools always run in this process. */
  hostBound?: boolean;
  /** For tools that type into a terminal: who will read the characters, so the agent judges them as shell input or not. */
  inputReader?(args: z.infer<Schema>): InputReader | undefined;
  execute(args: z.infer<Schema>, ctx: ToolContext): Promise<unknown>;
}

/** A failure the model should read and may correct (bad session id, file too large, …). */
export class ToolError extends AgentdError {
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, { details });
  }
}

export function defineTool<Schema extends z.ZodType>(tool: ToolDefinition<Schema>): ToolDefinition<Schema> {
  return tool;
}
