import type { ApprovalsConfig, ScopePolicy } from "../core/config/sections/approvalsConfig.ts";
import type { ApprovalStore } from "./approvalStore.ts";
import { decideCallPolicy } from "./approvalPolicy.ts";
import type { ToolCallRecord } from "./toolCallStore.ts";
import type { ToolDefinition } from "../core/tools/toolDefinition.ts";

export interface CallVerdictContext {
  approvals: ApprovalStore;
  approvalsConfig: ApprovalsConfig;
  /** The approvals policy with the session's own settings over it. */
  policy: ScopePolicy;
  grants: ReadonlySet<string>;
}

export interface CallVerdict {
  verdict: "allow" | "ask" | "deny";
  /** The scope judged (and asked about): an exec call that runs sudo is judged as `sudo`. */
  scope: string;
  /** What decided: "user:<decision>", "rule:<glob>", "policy:<scope>" or "grant:<scope>". */
  reason: string;
}

/**
 * Whether one planned call runs, waits or is refused: a call that already waited for the user
 * gets the user's answer; any other call is judged by the policy, command rules and grants.
 */
export function callVerdict(
  record: ToolCallRecord,
  tool: ToolDefinition,
  command: string | undefined,
  context: CallVerdictContext,
  escalation?: readonly string[],
): CallVerdict {
  if (record.status === "awaiting_approval" && record.approval_id) {
    const approval = context.approvals.get(record.approval_id);
    const verdict =
      approval.status === "allow_once" || approval.status === "allow_session" ? "allow" : approval.status === "pending" ? "ask" : "deny";
    return { verdict, scope: approval.scope, reason: `user:${approval.status}` };
  }
  return decideCallPolicy({
    scope: tool.scope,
    command,
    policy: context.policy,
    rules: context.approvalsConfig.rules,
    grants: context.grants,
    escalation,
  });
}

/** What the model is told about a refused call. */
export function deniedMessage(tool: ToolDefinition, reason: string): string {
  return reason.startsWith("user:")
    ? `denied by the user: ${tool.name} was not run`
    : `denied by policy (${reason}): ${tool.name} was not run`;
}
