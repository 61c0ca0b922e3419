import { describeRequestStatus, type ActionRequest } from "../watchdog/index.ts";
import { escapeHtml } from "./escapeHtml.ts";

/** The answer to the incident page's Allow/Deny buttons: htmx swaps it in place of the form. */
export function actionDecisionFragment(request: ActionRequest): string {
  const text = `run_command ${request.command}: ${describeRequestStatus(request)}`;
  return `<p class="result action-result" data-request="${request.id}" data-status="${escapeHtml(request.status)}">${escapeHtml(text)}</p>`;
}

/** Why a decision was refused, for the page (the buttons stay, so a 4xx leaves them usable). */
export function actionErrorFragment(incidentId: number, code: string, message: string): string {
  return `<p class="result action-result approval-error" data-incident="${incidentId}" data-error="${escapeHtml(code)}">${escapeHtml(message)}</p>`;
}
