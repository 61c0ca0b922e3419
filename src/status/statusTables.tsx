import { Ago, domId, Pill } from "./statusCard.tsx";
import type { ApprovalRow, IncidentRow, SessionRow } from "./statusSnapshot.ts";

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

/**
 * Exactly what will run: the raw command (the parts that logs and the sidecar redact are marked),
 * where, and for which task. Only approvals made before raw commands were kept show the summary.
 */
function ApprovalSubject({ approval }: { approval: ApprovalRow }) {
  const spans = approval.command_spans ?? (approval.command === undefined ? undefined : [{ text: approval.command, redacted: false }]);
  if (!spans) return <pre class="details">{approval.summary}</pre>;
  const marked = spans.some((span) => span.redacted);
  return (
    <>
      <pre class="details command" data-raw-command="">
        {spans.map((span) => (span.redacted ? <mark class="redacted">{span.text}</mark> : span.text))}
      </pre>
      <p class="meta">
        on <code>{approval.target ?? "local"}</code>
        {approval.workdir !== undefined && (
          <>
            {" "}
            in <code>{approval.workdir}</code>
          </>
        )}
        {approval.task ? <> for the task “{approval.task}”</> : ""}
        {marked && <> (marked parts are secrets: logs and the debug sidecar show them as [redacted])</>}
      </p>
    </>
  );
}

export function ApprovalItem({ approval, now }: { approval: ApprovalRow; now: number }) {
  const itemId = domId("approval", approval.id);
  const url = `/status/approvals/${encodeURIComponent(approval.id)}/decide`;
  return (
    <li id={itemId}>
      <div>
        <strong>{approval.tool}</strong> <Pill text={approval.scope} tone="warn" /> session <code>{approval.session_id}</code>, waiting{" "}
        <Ago at={approval.requested_at} now={now} />
      </div>
      <ApprovalSubject approval={approval} />
      <form
        class="actions"
        method="post"
        action={url}
        hx-post={url}
        hx-target="this"
        hx-swap="outerHTML"
        hx-disabled-elt={`#${itemId} button`}
        data-approval-form=""
      >
        <button type="submit" name="decision" value="allow_once">
          Allow once
        </button>
        <button type="submit" name="decision" value="allow_session">
          Allow for session
        </button>
        <button type="submit" name="decision" value="deny" class="danger">
          Deny
        </button>
      </form>
      <p class="result" role="status" hidden></p>
    </li>
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
              <code>{s.id}</code>
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
