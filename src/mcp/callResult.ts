import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { DirectCallAnswer } from "../agent/index.ts";

/** The message of an `{"error": {…}}` result, or undefined when the content is a tool's own result. */
function errorMessageOf(content: string): string | undefined {
  try {
    const parsed = JSON.parse(content) as { error?: { message?: unknown } };
    return typeof parsed?.error?.message === "string" ? parsed.error.message : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An answer as an MCP tool result: the tool's output as text; a refusal, failure or timeout as a
 * tool error the model reads ("denied by the user: …"); a call still waiting says how to fetch it.
 */
export function callToolResult(answer: DirectCallAnswer): CallToolResult {
  const meta = { "agentd/call_id": answer.call_id, ...(answer.approval_id ? { "agentd/approval_id": answer.approval_id } : {}) };
  if (answer.status !== "finished") {
    const waiting =
      answer.status === "awaiting_approval"
        ? `still waits for approval ${answer.approval_id} (agentd approve ${answer.approval_id} once|session|deny)`
        : "is still running";
    return {
      content: [
        { type: "text", text: `Call ${answer.call_id} ${waiting}; read its result with get_call_result {"call_id":"${answer.call_id}"}` },
      ],
      isError: true,
      _meta: meta,
    };
  }
  const content = answer.content ?? "";
  if (answer.outcome === "ok") return { content: [{ type: "text", text: content }], _meta: meta };
  return { content: [{ type: "text", text: errorMessageOf(content) ?? content }], isError: true, _meta: meta };
}
