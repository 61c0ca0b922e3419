import { hostname } from "node:os";
import { POLL_INTERVAL, POLL_REQUEST } from "./statusCard.tsx";
import { formatTime } from "./statusFormat.ts";
import type { HostVerdict } from "./hostVerdict.ts";

/** The tab's title: the verdict first, then the host, so a tab among many (a fleet) still tells both. */
export function verdictTitle(verdict: HostVerdict, host: string = hostname()): string {
  return verdict.status === "pass" ? `pass · ${host} · agentd` : `${verdict.status.toUpperCase()} · ${host} · ${verdict.reason}`;
}

/**
 * The verdict across the top, polled like a section; each answer carries the title and the time
 * it was made, which the page script copies to <title> and the header.
 */
export function VerdictBanner({ verdict, now }: { verdict: HostVerdict; now: number }) {
  return (
    <section
      id="section-verdict"
      class={`verdict wide tone-${verdict.status}`}
      data-poll={POLL_INTERVAL}
      data-title={verdictTitle(verdict)}
      data-generated={`as of ${formatTime(now)}`}
      data-status={verdict.status}
      hx-get="/status/fragments/verdict"
      hx-trigger={`every ${POLL_INTERVAL}, refresh from:body`}
      hx-swap="outerHTML"
      hx-request={POLL_REQUEST}
      role="status"
    >
      <p>
        <span class={`pill overall tone-${verdict.status}`}>{verdict.status}</span>{" "}
        <strong data-field="verdict-reason">{verdict.reason}</strong>
      </p>
      {verdict.reasons.length > 1 && (
        <ul class="why">
          {verdict.reasons.slice(1).map((reason) => (
            <li>{reason}</li>
          ))}
        </ul>
      )}
    </section>
  );
}
