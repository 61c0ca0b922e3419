import { revealInvisibleChars } from "../core/text/index.ts";
import type { SessionTranscript } from "../agent/index.ts";
import { redactText } from "../core/redaction/index.ts";
import { Ago, Pill, POLL_INTERVAL, POLL_REQUEST } from "./statusCard.tsx";
import { formatMs } from "./statusFormat.ts";
import { Layout, pageTitle, renderDocument } from "./statusLayout.tsx";
import { ApprovalItem } from "./statusQueue.tsx";
import type { ApprovalRow } from "./statusSnapshot.ts";
import { terminalText } from "../core/text/index.ts";
import { transcriptEntries, type TranscriptCall } from "./transcriptView.ts";

function ToolCallItem({ detail, now }: { detail: TranscriptCall; now: number }) {
  const { call } = detail;
  return (
    <li class={detail.failed ? "tool-call failed" : "tool-call"} data-call={call.id} data-result={detail.result}>
      <span class="role">tool call</span> <strong>{call.tool}</strong>{" "}
      <Pill text={detail.result} tone={detail.failed ? "fail" : detail.result === "ok" ? "pass" : "warn"} />
      {detail.exit_code !== null && (
        <>
          {" "}
          <span data-field="exit-code">exit {detail.exit_code}</span>
        </>
      )}
      {call.duration_ms !== null && <span class="note"> in {formatMs(call.duration_ms)}</span>} <Ago at={call.created_at} now={now} />
      <pre class="details">{revealInvisibleChars(redactText(JSON.stringify(call.arguments)))}</pre>
      {detail.approvals.map((approval) => (
        <p class="meta" data-field="approval">
          approval <code>{approval.id}</code>: {approval.status}
          {approval.decided_by ? ` by ${approval.decided_by}` : ""}
          {approval.decided_at ? (
            <>
              {" "}
              <Ago at={approval.decided_at} now={now} />
            </>
          ) : null}
        </p>
      ))}
      {call.error_message && <p class="error">{redactText(terminalText(call.error_message))}</p>}
      {detail.output_tail !== null && <pre class="details output">{revealInvisibleChars(detail.output_tail)}</pre>}
    </li>
  );
}

/** What the session waits for, with the same decide buttons as the page's approval queue. */
function WaitingDecisions({ pending, now }: { pending: ApprovalRow[]; now: number }) {
  return (
    <div class="waiting" data-field="waiting">
      <p>
        <Pill text="waiting for a decision" tone="warn" />
      </p>
      <ul class="approvals">
        {pending.map((approval) => (
          <ApprovalItem approval={approval} now={now} />
        ))}
      </ul>
    </div>
  );
}

export interface TranscriptView {
  transcript: SessionTranscript;
  /** The session's approvals still waiting, from the page's one queue. */
  pending: ApprovalRow[];
  now: number;
}

/** The transcript as one polled fragment: the page's only live part, and without JavaScript a snapshot. */
export function TranscriptSection({ transcript, pending, now }: TranscriptView) {
  const { session } = transcript;
  const path = `/status/sessions/${encodeURIComponent(session.id)}`;
  const entries = transcriptEntries(transcript);
  return (
    <section
      id="section-transcript"
      class="card"
      data-poll={POLL_INTERVAL}
      hx-get={`${path}/fragment`}
      hx-trigger={`every ${POLL_INTERVAL}, refresh from:body`}
      hx-swap="outerHTML"
      hx-request={POLL_REQUEST}
    >
      <h2>
        Session <code>{session.id}</code>
        <span class="summary">
          {session.kind === "mcp" ? `MCP client ${session.client ?? ""}` : `model ${session.model}`} on {session.target}
        </span>{" "}
        <Pill text={session.state} />
      </h2>
      {session.title && <p class="meta">task: {redactText(session.title)}</p>}
      {pending.length > 0 && <WaitingDecisions pending={pending} now={now} />}
      {entries.length === 0 ? (
        <p class="empty">Nothing in this session yet.</p>
      ) : (
        <ol class="transcript">
          {entries.map((entry) =>
            entry.type === "message" ? (
              <li class={`message ${entry.role}`}>
                <span class="role">{entry.role}</span> <Ago at={entry.ts} now={now} />
                <pre class="details">{revealInvisibleChars(entry.text)}</pre>
              </li>
            ) : (
              <ToolCallItem detail={entry.detail} now={now} />
            ),
          )}
        </ol>
      )}
    </section>
  );
}

export function renderTranscriptFragment(view: TranscriptView): string {
  return String(<TranscriptSection {...view} />);
}

export function renderTranscriptPage(view: TranscriptView): string {
  return renderDocument(
    <Layout title={pageTitle(`session ${view.transcript.session.id}`)} generatedAt={view.now} live single>
      <TranscriptSection {...view} />
    </Layout>,
  );
}
