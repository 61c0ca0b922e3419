import { Ago, domId, Pill } from "./statusCard.tsx";
import type { IncidentRow, SessionRow } from "./statusSnapshot.ts";

/** One incident as a table row; also the answer to the page's Acknowledge and Resolve buttons. */
export function IncidentRowView({ incident, now }: { incident: IncidentRow; now: number }) {
  const rowId = domId("incident", incident.id);
  const button = (verb: "ack" | "resolve", label: string) => (
    <button
      type="submit"
      formaction={`/status/incidents/${incident.id}/${verb}`}
      hx-post={`/status/incidents/${incident.id}/${verb}`}
      hx-target={`#${rowId}`}
      hx-swap="outerHTML"
      hx-disabled-elt={`#${rowId} button`}
    >
      {label}
    </button>
  );
  return (
    <tr id={rowId}>
      <td class="num">
        <a href={`/status/incidents/${incident.id}`}>{incident.id}</a>
      </td>
      <td>
        <Pill text={incident.state} tone={incident.state === "open" ? "fail" : incident.state === "acknowledged" ? "warn" : "pass"} />
      </td>
      <td class="opt">{incident.severity}</td>
      <td class="num opt">{incident.count}</td>
      <td class="opt">
        <Ago at={incident.last_seen} now={now} />
      </td>
      <td class="text">{incident.title}</td>
      <td>
        {incident.state !== "resolved" && (
          <form class="actions" method="post" action={`/status/incidents/${incident.id}/${incident.state === "open" ? "ack" : "resolve"}`}>
            {incident.state === "open" && button("ack", "Acknowledge")}
            {button("resolve", "Resolve")}
          </form>
        )}
      </td>
    </tr>
  );
}

export function IncidentTable({ rows, now }: { rows: IncidentRow[]; now: number }) {
  return (
    <table>
      <thead>
        <tr>
          <th class="num">#</th>
          <th>State</th>
          <th class="opt">Severity</th>
          <th class="num opt">Count</th>
          <th class="opt">Last seen</th>
          <th>Title</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        {rows.map((incident) => (
          <IncidentRowView incident={incident} now={now} />
        ))}
      </tbody>
    </table>
  );
}

export function SessionTable({ rows, now }: { rows: SessionRow[]; now: number }) {
  return (
    <table>
      <thead>
        <tr>
          <th>Id</th>
          <th class="opt">Target</th>
          <th class="opt">Model</th>
          <th>State</th>
          <th class="opt">Started</th>
          <th>Active</th>
          <th>Title</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((s) => (
          <tr>
            <td>
              <a href={`/status/sessions/${encodeURIComponent(s.id)}`}>
                <code>{s.id}</code>
              </a>
            </td>
            <td class="opt">{s.target}</td>
            <td class="opt">
              <code>{s.model}</code>
            </td>
            <td>
              <Pill text={s.state} />
            </td>
            <td class="opt">
              <Ago at={s.started_at} now={now} />
            </td>
            <td>
              <Ago at={s.last_activity} now={now} />
            </td>
            <td class="text">{s.title ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
