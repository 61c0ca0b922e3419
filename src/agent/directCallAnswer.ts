import type { DirectCallAnswer } from "./directCallTypes.ts";
import type { StoredMessage } from "./sessionStore.ts";
import type { ToolCallRecord } from "./toolCallStore.ts";

/**
 * What a client is told of its call: where it stands and, once finished, the tool message of its
 * turn (read only then) as the model would read it.
 */
export function directCallAnswer(record: ToolCallRecord, turnMessages: () => readonly StoredMessage[]): DirectCallAnswer {
  const content =
    record.status === "finished"
      ? turnMessages().find((m) => m.role === "tool" && m.body.tool_call_id === record.call_id)?.body.content
      : undefined;
  return {
    call_id: record.call_id,
    tool: record.tool,
    status: record.status,
    outcome: record.outcome,
    ...(typeof content === "string" ? { content } : {}),
    approval_id: record.approval_id,
  };
}
