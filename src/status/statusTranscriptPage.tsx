import { revealInvisibleChars } from "../core/text/index.ts";
import type { SessionTranscript } from "../agent/index.ts";
import { redactText } from "../core/redaction/index.ts";
import { Ago, Pill, POLL_INTERVAL, POLL_REQUEST } from "./statusCard.tsx";
import { formatMs } from "./statusFormat.ts";
import { Layout, renderDocument } from "./statusLayout.tsx";
import { transcriptEntries, type TranscriptCall } from "./transcriptView.ts";

function ToolCallItem({ detail, now }: { detail: TranscriptCall; now: number }) {
  const { call } = detail;
  const failed = detail.exit_code !== null ? detail.exit_code !== 0 : call.outcome !== null && call.outcome !== "ok";
  return (
    <li class="tool-call" data-call={call.id}>
      <span class="role">tool call</span> <strong>{call.tool}</strong>{" "}
      <Pill text={call.outcome ?? call.status} tone={failed ? "fail" : call.outcome === "ok" ? "pass" : "warn"} />
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
      {call.error_message && <p class="error">{redactText(call.error_message)}</p>}
      {detail.output_tail !== null && <pre class="details output">{revealInvisibleChars(detail.output_tail)}</pre>}
    </li>
  );
}

/** The transcript as one polled fragment: the page's only live part, and without JavaScript a snapshot. */
export function TranscriptSection({ transcript, now }: { transcript: SessionTranscript; now: number }) {
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

export function renderTranscriptFragment(transcript: SessionTranscript, now: number): string {
  return String(<TranscriptSection transcript={transcript} now={now} />);
}

export function renderTranscriptPage(transcript: SessionTranscript, now: number): string {
  return renderDocument(
    <Layout title={`agentd — session ${transcript.session.id}`} generatedAt={now} live single>
      <TranscriptSection transcript={transcript} now={now} />
    </Layout>,
  );
}
