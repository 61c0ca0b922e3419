import type { DecisionResult } from "../agent/index.ts";
import { escapeHtml } from "./escapeHtml.ts";

const DECISION_TEXT: Record<string, string> = {
  allow_once: "Allowed once",
  allow_session: "Allowed for this session",
  deny: "Denied",
  cancelled: "Cancelled",
};

/** The small HTML answer for the status page's approval buttons (HTMX swaps it in place of the buttons). */
export function decisionFragment(result: DecisionResult): string {
  const { approval } = result;
  const what = `${DECISION_TEXT[approval.status] ?? approval.status}: ${approval.summary}`;
  const more = [
    result.released.length ? `${result.released.length} more pending call(s) released` : "",
    result.resumed ? "the turn continues" : "",
  ]
    .filter(Boolean)
    .join("; ");
  return `<span class="approval-result" data-approval="${escapeHtml(approval.id)}" data-status="${escapeHtml(approval.status)}">${escapeHtml(what)}${more ? ` (${escapeHtml(more)})` : ""}</span>`;
}

export function decisionErrorFragment(approvalId: string, message: string): string {
  return `<span class="approval-result approval-error" data-approval="${escapeHtml(approvalId)}">${escapeHtml(message)}</span>`;
}
