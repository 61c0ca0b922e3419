import { createParser } from "eventsource-parser";
// The transcript helpers alone: the agent's index.ts would load the whole agent (and the openai SDK) into a client command.
import { approvalQuestion, parseApprovalAnswer, type StreamedEvent } from "../../agent/terminalTranscript.ts";
import type { AgentdError } from "../../core/errors/index.ts";
import { UsageError, type Command } from "../command.ts";
import { DAEMON_LOCATION_HELP, daemonError, daemonFetch, daemonTargetFrom, type DaemonTarget } from "../daemonClient.ts";
import { CTRL_C, KeyPrompt } from "../keyPrompt.ts";
import { runTranscriptLine } from "../runTranscript.ts";

/** Exit code when a decision is needed and nobody can be asked (no TTY). */
const RUN_EXIT_APPROVAL_NEEDED = 3;
/** Exit code after Ctrl-C cancelled the turn (128 + SIGINT, as a shell reports it). */
const RUN_EXIT_CANCELLED = 130;

interface PendingApproval {
  approval_id: string;
  tool: string;
  summary: string;
}

async function failure(response: Response): Promise<AgentdError> {
  return daemonError(response.status, await response.text());
}

/** Reads one SSE stream of session events to its end (or until aborted); returns the last event number. */
async function consume(response: Response, onEvent: (event: StreamedEvent) => void): Promise<number> {
  if (!response.ok || !response.body) throw await failure(response);
  let last = 0;
  const parser = createParser({
    onEvent(e) {
      const data = JSON.parse(e.data) as Record<string, unknown>;
      const event: StreamedEvent = { seq: Number(e.id ?? data.seq), type: e.event ?? "message", data };
      last = event.seq;
      onEvent(event);
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of response.body) parser.feed(decoder.decode(chunk, { stream: true }));
  return last;
}

/** One `agentd run`: follows the session's events, asks its questions and handles Ctrl-C. */
class RunFollower {
  readonly stream = new AbortController();
  readonly prompt = new KeyPrompt();
  readonly interactive = KeyPrompt.available();
  /** Set once the command knows how it ends (a cancel, a detach, a question nobody can answer). */
  exitCode?: number;
  ended?: string;
  last = 0;
  #wroteText = false;
  #queue: PendingApproval[] = [];
  #decided = new Set<string>();
  #asking?: PendingApproval;
  #asker?: Promise<void>;
  #error?: unknown;

  constructor(
    private readonly target: DaemonTarget,
    private readonly sessionId: string,
  ) {}

  /** Reads streams until the turn ends or the command stops; the messages stream closes at a pause, the events stream does not. */
  async follow(first: Response): Promise<void> {
    let response = first;
    for (;;) {
      try {
        this.last = Math.max(this.last, await consume(response, (event) => this.#onEvent(event)));
      } catch (error) {
        if (!this.stream.signal.aborted) throw error;
      }
      if (this.#error) throw this.#error;
      if (this.exitCode !== undefined || this.ended) return;
      response = await daemonFetch(this.target, `/api/sessions/${this.sessionId}/events?after=${this.last}`, {
        signal: this.stream.signal,
      });
    }
  }

  finish(): void {
    this.prompt.cancel();
    if (this.#wroteText) process.stdout.write("\n");
    this.#wroteText = false;
  }

  #interrupting?: Promise<void>;

  /** Ctrl-C: cancel the turn or detach from it, and say which; one at a time. */
  interrupt(): Promise<void> {
    this.#interrupting ??= this.#interrupt().finally(() => {
      this.#interrupting = undefined;
    });
    return this.#interrupting;
  }

  /** Waits for a Ctrl-C being answered, so the exit code is the one it chose. */
  async settled(): Promise<void> {
    await this.#interrupting;
  }

  async #interrupt(): Promise<void> {
    this.#lineBreak();
    let key: string | undefined = CTRL_C;
    if (this.interactive)
      key = await this.prompt.ask("Ctrl-C: [c]ancel the turn, [d]etach and leave it running, any other key to keep watching ");
    if (key === undefined) return;
    if (this.interactive) process.stderr.write(`${key === CTRL_C ? "" : key}\n`);
    if (key.toLowerCase() === "c") {
      const response = await daemonFetch(this.target, `/api/sessions/${this.sessionId}/cancel`, { method: "POST" });
      const body = (await response.json()) as { cancelled?: boolean };
      process.stderr.write(
        body.cancelled
          ? `Cancelled the turn of session ${this.sessionId}.\n`
          : `Nothing to cancel: session ${this.sessionId}'s turn had ended.\n`,
      );
      this.#stop(RUN_EXIT_CANCELLED);
    } else if (key.toLowerCase() === "d" || key === CTRL_C) {
      process.stderr.write(
        `Detached: the turn goes on in agentd. Follow it: GET ${this.target.url}/api/sessions/${this.sessionId}/events?after=${this.last}; cancel it: POST …/api/sessions/${this.sessionId}/cancel\n`,
      );
      this.#stop(this.interactive ? 0 : RUN_EXIT_CANCELLED);
    } else if (this.#asking) {
      this.#queue.unshift(this.#asking);
    }
  }

  #stop(code: number): void {
    this.exitCode = code;
    this.prompt.cancel();
    this.stream.abort();
  }

  #lineBreak(): void {
    if (this.#wroteText) process.stdout.write("\n");
    this.#wroteText = false;
  }

  #show(event: StreamedEvent): void {
    const out = runTranscriptLine(event);
    if (out.text) {
      process.stdout.write(out.text);
      this.#wroteText = true;
    }
    if (out.note) {
      this.#lineBreak();
      process.stderr.write(`${out.note}\n`);
    }
  }

  #onEvent(event: StreamedEvent): void {
    if (this.exitCode !== undefined) return;
    if (event.type === "approval.decided") {
      const id = String(event.data.approval_id);
      const mine = this.#decided.has(id);
      this.#decided.add(id);
      // Answered elsewhere while this terminal asked: stop asking and say who decided.
      if (!mine && this.#asking?.approval_id === id && this.prompt.waiting) {
        this.prompt.cancel();
        process.stderr.write(`— decided elsewhere by ${event.data.decided_by}\n`);
      }
    }
    if (event.type === "turn.end") {
      this.ended = String(event.data.reason);
      this.#queue = [];
      if (this.prompt.waiting) {
        this.prompt.cancel();
        process.stderr.write("— the turn ended\n");
      }
    }
    this.#show(event);
    if (event.type === "approval_required") this.#needDecisions(event.data.approvals as PendingApproval[]);
  }

  #needDecisions(approvals: PendingApproval[]): void {
    // The question (or the no-TTY notice) starts its own line, not the end of the model's text.
    this.#lineBreak();
    if (!this.interactive) {
      process.stderr.write("The agent waits for a decision:\n");
      for (const a of approvals) process.stderr.write(`  ${a.summary}\n    agentd approve ${a.approval_id} once|session|deny\n`);
      process.stderr.write(`Then follow the turn with: GET ${this.target.url}/api/sessions/${this.sessionId}/events?after=${this.last}\n`);
      this.#stop(RUN_EXIT_APPROVAL_NEEDED);
      return;
    }
    this.#queue.push(...approvals);
    this.#asker ??= this.#askAll()
      .catch((error: unknown) => {
        this.#error = error;
        this.stream.abort();
      })
      .finally(() => {
        this.#asker = undefined;
      });
  }

  async #askAll(): Promise<void> {
    for (let next = this.#queue.shift(); next; next = this.#queue.shift()) {
      if (this.#decided.has(next.approval_id) || this.exitCode !== undefined) continue;
      this.#asking = next;
      const key = await this.prompt.ask(approvalQuestion(next));
      if (key === undefined) continue;
      if (key === CTRL_C) {
        await this.interrupt();
        continue;
      }
      const decision = parseApprovalAnswer(key);
      if (!decision) {
        process.stderr.write(`${key.trim() ? key : ""}\nAnswer o (once), s (session) or d (deny).\n`);
        this.#queue.unshift(next);
        continue;
      }
      process.stderr.write(`${key}\n`);
      this.#decided.add(next.approval_id);
      const response = await daemonFetch(this.target, `/api/approvals/${next.approval_id}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ decision, decided_by: "cli" }),
      });
      // 409: decided meanwhile elsewhere (page, another CLI); the stream shows what happened.
      if (!response.ok && response.status !== 409) throw await failure(response);
      await response.body?.cancel();
    }
    this.#asking = undefined;
  }
}

export const runCommand: Command = {
  path: ["run"],
  summary:
    "Give the agent a task and stream its turn; asks before privileged tools with one key (exit 3 without a TTY); Ctrl-C cancels or detaches.",
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
    "",
    "On a terminal a question is answered with one key: o (once), s (session), d (deny); a decision made",
    "elsewhere (the page, agentd approve) is followed. Ctrl-C asks: c cancels the turn (exit 130), d detaches",
    "and leaves it running (exit 0). Without a terminal a question ends the command with exit 3.",
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
    const follower = new RunFollower(target, sessionId);
    const onInterrupt = () => {
      follower.interrupt().catch((error: unknown) => {
        process.stderr.write(`agentd run: ${(error as Error).message}\n`);
        follower.stream.abort();
      });
    };
    process.on("SIGINT", onInterrupt);
    try {
      // No deadline on the stream: a turn may run for a long time; heartbeats keep it alive.
      await follower.follow(
        await daemonFetch(target, `/api/sessions/${sessionId}/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ content: prompt }),
          signal: follower.stream.signal,
        }),
      );
      await follower.settled();
    } finally {
      process.off("SIGINT", onInterrupt);
      follower.finish();
    }
    if (follower.exitCode !== undefined) return follower.exitCode;
    return follower.ended === "stop" || follower.ended === "max_steps" ? 0 : 1;
  },
};
