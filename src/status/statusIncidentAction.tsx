import { describeRequestStatus, type ActionRequest } from "../watchdog/index.ts";
import { formatTime } from "./statusFormat.ts";
import { Ago, domId, Pill } from "./statusCard.tsx";

/**
 * The command the watchdog wants to run on an incident and its decision. While pending: Allow and
 * Deny buttons posting to `/status/incidents/:id/action` (htmx swaps the answer in place of the form
 * and disables the buttons while the request is in flight; without JavaScript the form posts and
 * the browser is sent back here).
 */
export function IncidentActionRequest({ request, now }: { request: ActionRequest; now: number }) {
  const formId = domId("action-request", request.id);
  const url = `/status/incidents/${request.incident_id}/action`;
  const tone =
    request.status === "pending" || request.status === "allowed" || request.status === "running"
      ? "warn"
      : request.status === "done"
        ? "pass"
        : "fail";
  return (
    <section class="card" id={domId("incident-action", request.incident_id)}>
      <h2>Command approval</h2>
      <p>
        <code>run_command {request.command}</code> <Pill text={request.status} tone={tone} /> requested by tier {request.tier} at{" "}
        {formatTime(request.requested_at)} (<Ago at={request.requested_at} now={now} />)
      </p>
      <p class="text">Why: {request.reason}</p>
      {request.status === "pending" ? (
        <form
          id={formId}
          class="actions"
          method="post"
          action={url}
          hx-post={url}
          hx-target="this"
          hx-swap="outerHTML"
          hx-disabled-elt={`#${formId} button`}
        >
          <button type="submit" name="decision" value="allow">
            Allow and run
          </button>
          <button type="submit" name="decision" value="deny" class="danger">
            Deny
          </button>
          <span class="note">expires at {formatTime(request.expires_at)}</span>
        </form>
      ) : (
        <p class="result action-result" data-status={request.status}>
          {describeRequestStatus(request)}
        </p>
      )}
    </section>
  );
}
