import { SHOWN_DIGEST_CHARS } from "../agent/index.ts";
import { oneLine, revealInvisibleChars } from "../core/text/index.ts";
import { Ago, Card, domId, Pill } from "./statusCard.tsx";
import { EMPTY_TEXT } from "./statusSections.ts";
import type { ApprovalRow, StatusSection } from "./statusSnapshot.ts";

/**
 * Exactly what will run: the raw command (the parts that logs and the sidecar redact are marked),
 * where, and why. Only approvals made before raw commands were kept show the summary.
 */
function ApprovalSubject({ approval }: { approval: ApprovalRow }) {
  const spans = approval.command_spans ?? (approval.command === undefined ? undefined : [{ text: approval.command, redacted: false }]);
  if (!spans) return <pre class="details">{revealInvisibleChars(approval.summary)}</pre>;
  const marked = spans.some((span) => span.redacted);
  return (
    <>
      <pre class="details command" data-raw-command="">
        {spans.map((span) =>
          span.redacted ? <mark class="redacted">{revealInvisibleChars(span.text)}</mark> : revealInvisibleChars(span.text),
        )}
      </pre>
      <p class="meta">
        on <code>{revealInvisibleChars(approval.target ?? "local")}</code>
        {approval.workdir !== undefined && (
          <>
            {" "}
            in <code>{revealInvisibleChars(approval.workdir)}</code>
          </>
        )}
        {marked && <> (marked parts look like secrets: logs and the debug sidecar show them as [redacted])</>}
      </p>
      {approval.reasons && approval.reasons.length > 0 && (
        <p class="meta" data-field="reasons">
          asked because: {approval.reasons.map(revealInvisibleChars).join("; ")}
        </p>
      )}
      {approval.argv && <ExecWords argv={approval.argv} />}
    </>
  );
}

/** Control characters too (an ANSI-C quoted escape), beside what revealInvisibleChars shows. */
function revealWord(word: string): string {
  return oneLine(word).replace(/\p{Cc}/gu, (char) => `<U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}>`);
}

/**
 * A bare escalation runs without a shell, as exactly these words: each in a box of its own, so a
 * space inside a word, an empty word or a word split differently than the line suggests shows.
 */
function ExecWords({ argv }: { argv: string[] }) {
  return (
    <div class="meta" data-field="argv">
      runs as these words, without a shell:
      <ol class="argv">
        {argv.map((word) => (
          <li>
            <code>{revealWord(word)}</code>
          </li>
        ))}
      </ol>
    </div>
  );
}

/** The start of the digest the buttons send: what `agentd approve` lists too. */
function Digest({ digest }: { digest: string }) {
  return (
    <p class="meta" data-field="digest">
      digest <code title={digest}>{digest.slice(0, SHOWN_DIGEST_CHARS)}</code>
    </p>
  );
}

/** Why it was asked, and where to read more: the session's transcript, or the incident. */
function ApprovalWhy({ approval }: { approval: ApprovalRow }) {
  const link =
    approval.session_id !== null ? (
      <a href={`/status/sessions/${encodeURIComponent(approval.session_id)}`}>transcript of session {approval.session_id}</a>
    ) : approval.incident_id !== undefined ? (
      <a href={`/status/incidents/${approval.incident_id}`}>incident #{approval.incident_id}</a>
    ) : null;
  return (
    <p class="meta why-asked" data-field="why">
      {approval.task ? (
        <>
          why: <q>{revealInvisibleChars(approval.task)}</q>
        </>
      ) : (
        "why: not recorded"
      )}
      {link && <> · {link}</>}
    </p>
  );
}

function DecisionForm({ approval, itemId }: { approval: ApprovalRow; itemId: string }) {
  // The watchdog's commands are allowed or denied once, through their incident (same route as its page).
  if (approval.kind === "watchdog" && approval.incident_id !== undefined) {
    const url = `/status/incidents/${approval.incident_id}/action`;
    return (
      <form
        class="actions"
        method="post"
        action={url}
        hx-post={url}
        hx-target="this"
        hx-swap="outerHTML"
        hx-disabled-elt={`#${itemId} button`}
      >
        <button type="submit" name="decision" value="allow">
          Allow
        </button>
        <button type="submit" name="decision" value="deny" class="danger">
          Deny
        </button>
      </form>
    );
  }
  const url = `/status/approvals/${encodeURIComponent(approval.id)}/decide`;
  return (
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
      {approval.digest !== undefined && <input type="hidden" name="digest" value={approval.digest} />}
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
  );
}

export function ApprovalItem({ approval, now }: { approval: ApprovalRow; now: number }) {
  const itemId = domId("approval", approval.id);
  return (
    <li id={itemId} data-kind={approval.kind}>
      <div>
        <strong>{approval.tool}</strong> <Pill text={approval.scope} tone="warn" /> asked by{" "}
        <span data-field="requested-by">{approval.requested_by}</span>, waiting <Ago at={approval.requested_at} now={now} />
      </div>
      <ApprovalSubject approval={approval} />
      {approval.digest !== undefined && <Digest digest={approval.digest} />}
      <ApprovalWhy approval={approval} />
      <DecisionForm approval={approval} itemId={itemId} />
      <p class="result" role="status" hidden></p>
    </li>
  );
}

/** The one approval queue, pinned under the verdict: agent tool calls, MCP clients' calls and watchdog commands. */
export function ApprovalsCard({ data, now }: { data: StatusSection<ApprovalRow>; now: number }) {
  const waiting = data.configured && !data.error && data.rows.length > 0;
  return (
    <Card name="approvals" wide summary={data.configured ? `${data.rows.length} pending` : undefined} tone={waiting ? "warn" : undefined}>
      {waiting ? (
        <ul class="approvals">
          {data.rows.map((approval) => (
            <ApprovalItem approval={approval} now={now} />
          ))}
        </ul>
      ) : (
        <p class={data.error ? "error" : "empty"}>
          {data.error ?? (data.configured ? EMPTY_TEXT.approvals : `Not configured: ${data.note ?? ""}`)}
        </p>
      )}
    </Card>
  );
}
