import type { Logger } from "../core/log/index.ts";
import { redactText } from "../core/redaction/index.ts";
import type { ApprovalRequest } from "./approvalRequest.ts";
import type { ApprovalRecord, ApprovalStore } from "./approvalStore.ts";
import type { ToolCallRecord, ToolCallStore } from "./toolCallStore.ts";

export interface ApprovalQuestionDeps {
  approvals: ApprovalStore;
  toolCalls: ToolCallStore;
  logger: Logger;
  /** approvals.max_pending_per_session. */
  maxPending: number;
}

export interface ApprovalQuestion {
  sessionId: string;
  turnId: string;
  record: ToolCallRecord;
  tool: string;
  scope: string;
  /** Redacted, as the log and the list show it. */
  summary: string;
  /** Raw, as the card shows it. */
  request: ApprovalRequest;
  target: string;
  reason: string;
  escalation?: readonly string[];
}

/**
 * Records a question for a person and marks the call as waiting on it: the agent loop's calls and
 * MCP clients' alike. Throws TooManyPendingApprovalsError past the session's cap, asking nothing.
 */
export function askPerson(deps: ApprovalQuestionDeps, question: ApprovalQuestion): ApprovalRecord {
  const { sessionId, record, tool, scope, escalation } = question;
  const approval = deps.approvals.create(
    {
      session_id: sessionId,
      turn_id: question.turnId,
      tool_call_id: record.id,
      tool,
      scope,
      summary: question.summary,
      request: JSON.stringify(question.request),
      target: question.target,
    },
    deps.maxPending,
  );
  deps.toolCalls.awaitApproval(record.id, approval.id);
  deps.logger.info("approval.required", {
    session: sessionId,
    approval: approval.id,
    tool,
    scope,
    reason: question.reason,
    ...(escalation?.length ? { escalation: escalation.map((why) => redactText(why)) } : {}),
  });
  return approval;
}
