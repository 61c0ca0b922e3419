/** What a pending call will do, unredacted: kept in the approval row only (see ApprovalRecord.request). */
export interface ApprovalRequest {
  /** The command line (exec_command) or the typed characters (write_stdin). */
  command?: string;
  /**
   * A call asked in the sudo scope that is a bare escalation (bareEscalationArgv): the words it is
   * exec'd as, without a shell, once allowed. The approver reads them one by one.
   */
  argv?: string[];
  /** The call's arguments exactly as the model gave them. */
  arguments: unknown;
  workdir?: string;
  /** The host it runs on: "local" or a hop. */
  target: string;
  /** The user message of the turn that asked for it. */
  task: string;
  /** Why the text check sent it to the sudo scope (a file this session wrote, an unknown shell…). */
  reasons?: string[];
}

export interface ApprovalRequestInput {
  command: string | undefined;
  /** The call's arguments as given (a `workdir` among them is shown apart). */
  raw: unknown;
  target: string;
  task: string;
  reasons?: readonly string[];
  argv?: readonly string[];
}

/** The request an approval keeps, for the agent's calls and MCP clients' alike. Pure. */
export function approvalRequest(input: ApprovalRequestInput): ApprovalRequest {
  const workdir = (input.raw as { workdir?: unknown } | null)?.workdir;
  return {
    ...(input.command !== undefined ? { command: input.command } : {}),
    ...(input.argv ? { argv: [...input.argv] } : {}),
    arguments: input.raw,
    ...(typeof workdir === "string" ? { workdir } : {}),
    target: input.target,
    task: input.task,
    ...(input.reasons?.length ? { reasons: [...input.reasons] } : {}),
  };
}
