import { createInterface } from "node:readline/promises";
import { createParser } from "eventsource-parser";
// The transcript helpers alone: the agent's index.ts would load the whole agent (and the openai SDK) into a client command.
import { approvalQuestion, parseApprovalAnswer, transcriptLine, type StreamedEvent } from "../../agent/terminalTranscript.ts";
import type { AgentdError } from "../../core/errors/index.ts";
import { UsageError, type Command } from "../command.ts";
import { DAEMON_LOCATION_HELP, daemonError, daemonFetch, daemonTargetFrom, type DaemonTarget } from "../daemonClient.ts";

/** Exit code when a decision is needed and nobody can be asked (no TTY). */
const RUN_EXIT_APPROVAL_NEEDED = 3;

interface PendingApproval {
  approval_id: string;
  tool: string;
  summary: string;
}

async function failure(response: Response): Promise<AgentdError> {
  return daemonError(response.status, await response.text());
}

/** Reads one SSE stream of session events; returns the approvals it stopped at and the last event number. */
async function consume(
  response: Response,
  onEvent: (event: StreamedEvent) => void,
): Promise<{ last: number; ended?: string; approvals?: PendingApproval[] }> {
  if (!response.ok || !response.body) throw await failure(response);
  const state: { last: number; ended?: string; approvals?: PendingApproval[] } = { last: 0 };
  const parser = createParser({
    onEvent(e) {
      const data = JSON.parse(e.data) as Record<string, unknown>;
      const event: StreamedEvent = { seq: Number(e.id ?? data.seq), type: e.event ?? "message", data };
      state.last = event.seq;
      if (event.type === "approval_required") state.approvals = data.approvals as PendingApproval[];
      if (event.type === "turn.end") {
        state.ended = String(data.reason);
        state.approvals = undefined;
      }
      onEvent(event);
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of response.body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    // The events stream stays open through a pause; stop reading to ask.
    if (state.approvals) break;
  }
  return state;
}

async function askDecisions(target: DaemonTarget, approvals: PendingApproval[]): Promise<void> {
  // No line editing: its cursor sequences would pass the output guard as text; the terminal echoes input itself.
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: false });
  try {
    for (const approval of approvals) {
      let decision = parseApprovalAnswer(await rl.question(approvalQuestion(approval)));
      while (!decision) {
        process.stderr.write("Answer o (once), s (session) or d (deny).\n");
        decision = parseApprovalAnswer(await rl.question(approvalQuestion(approval)));
      }
      const response = await daemonFetch(target, `/api/approvals/${approval.approval_id}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ decision, decided_by: "cli" }),
      });
      // 409: decided meanwhile elsewhere (page, another CLI); the stream shows what happened.
      if (!response.ok && response.status !== 409) throw await failure(response);
    }
  } finally {
    rl.close();
  }
}

export const runCommand: Command = {
  path: ["run"],
  summary: "Give the agent a task and stream its turn; asks before privileged tools (exit 3 without a TTY).",
  usage: 'agentd run "check disk usage" [--on HOP] [--url URL] [--model MODEL] [--session ID]',
  allowPositionals: true,
  options: {
    url: { type: "string" },
    token: { type: "string" },
    model: { type: "string" },
    session: { type: "string" },
    on: { type: "string" },
    config: { type: "string", short: "c" },
    "data-dir": { type: "string" },
  },
  help: [
    "      --url URL         agentd to talk to (default: AGENTD_URL, the local daemon's ready file, http://127.0.0.1:7070)",
    "      --model MODEL     model for a new session (default: agent.model in the config)",
    "      --session ID      continue an existing session instead of starting one",
    "      --on HOP          run a new session's tools on a connected hop (default: local)",
    ...DAEMON_LOCATION_HELP,
  ],
  async run({ values, positionals }) {
    const prompt = positionals.join(" ").trim();
    if (!prompt) throw new UsageError('say what the agent should do, e.g. agentd run "check disk usage"');
    const target = daemonTargetFrom(values);
    let sessionId = values.session as string | undefined;
    if (!sessionId) {
      const created = await daemonFetch(target, "/api/sessions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          ...(values.model ? { model: values.model } : {}),
          ...(typeof values.on === "string" ? { target: values.on } : {}),
        }),
      });
      if (created.status !== 201) throw await failure(created);
      sessionId = ((await created.json()) as { id: string }).id;
    }
    process.stderr.write(`session ${sessionId}\n`);
    let wroteText = false;
    const show = (event: StreamedEvent) => {
      const out = transcriptLine(event);
      if (out.text) {
        process.stdout.write(out.text);
        wroteText = true;
      }
      if (out.note) {
        if (wroteText) process.stdout.write("\n");
        wroteText = false;
        process.stderr.write(`${out.note}\n`);
      }
    };
    // No deadline on the stream: a turn may run for a long time; heartbeats keep it alive.
    const stream = new AbortController();
    let state = await consume(
      await daemonFetch(target, `/api/sessions/${sessionId}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: prompt }),
        signal: stream.signal,
      }),
      show,
    );
    while (state.approvals?.length) {
      // The question (or the no-TTY notice) starts its own line, not the end of the model's text.
      if (wroteText) process.stdout.write("\n");
      wroteText = false;
      if (!process.stdin.isTTY) {
        process.stderr.write("The agent waits for a decision:\n");
        for (const a of state.approvals) process.stderr.write(`  ${a.summary}\n    agentd approve ${a.approval_id} once|session|deny\n`);
        process.stderr.write(
          `Then follow the turn with: agentd run --session ${sessionId} … or GET /api/sessions/${sessionId}/events?after=${state.last}\n`,
        );
        return RUN_EXIT_APPROVAL_NEEDED;
      }
      await askDecisions(target, state.approvals);
      const next = await consume(
        await daemonFetch(target, `/api/sessions/${sessionId}/events?after=${state.last}`, { signal: stream.signal }),
        show,
      );
      state = { ...next, last: next.last || state.last };
    }
    if (wroteText) process.stdout.write("\n");
    return state.ended === "stop" || state.ended === "max_steps" ? 0 : 1;
  },
};
