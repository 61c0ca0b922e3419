import { createParser } from "eventsource-parser";
// The transcript helpers alone: the agent's index.ts would load the whole agent (and the openai SDK) into a client command.
import { approvalQuestion, parseApprovalAnswer, type StreamedEvent } from "../agent/terminalTranscript.ts";
import type { AgentdError } from "../core/errors/index.ts";
import { daemonError, daemonFetch, type DaemonTarget } from "./daemonClient.ts";
import { INTERRUPT_QUESTION, parseInterruptAnswer, type InterruptChoice } from "./interruptAnswer.ts";
import { CTRL_C, KeyPrompt } from "./keyPrompt.ts";
import { reattachCommand } from "./reattachCommand.ts";
import { runTranscriptLine } from "./runTranscript.ts";

/** Exit code when a decision is needed and nobody can be asked (no TTY). */
export const RUN_EXIT_APPROVAL_NEEDED = 3;
/** Exit code after Ctrl-C cancelled the turn (128 + SIGINT, as a shell reports it). */
export const RUN_EXIT_CANCELLED = 130;

export interface PendingApproval {
  approval_id: string;
  tool: string;
  summary: string;
}

export async function failure(response: Response): Promise<AgentdError> {
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

/**
 * Follows one session's events for `agentd run` and `agentd attach`: prints them, asks their
 * questions and handles Ctrl-C. Events up to `historyUntil` are a replay: printed, never asked.
 */
export class SessionFollower {
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
    /** The options that found the daemon, repeated in the command that re-attaches. */
    private readonly location: Record<string, string | boolean | undefined>,
    private readonly historyUntil = 0,
  ) {}

  /**
   * Reads streams until the turn ends or the command stops. The messages stream closes at a pause,
   * and the events stream then follows; an events stream closes only once the session is idle.
   */
  async follow(first: Response, firstIsEvents = false): Promise<void> {
    let response = first;
    for (let events = firstIsEvents; ; events = true) {
      try {
        this.last = Math.max(this.last, await consume(response, (event) => this.#onEvent(event)));
      } catch (error) {
        if (!this.stream.signal.aborted) throw error;
      }
      if (this.#error) throw this.#error;
      if (this.exitCode !== undefined || this.ended || events) return;
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
    // Without a terminal to ask on, Ctrl-C detaches (exit 130, as an interrupted command).
    let choice: InterruptChoice = "leave";
    if (this.interactive) {
      const answer = await this.#askInterrupt();
      if (answer === undefined) return;
      choice = answer;
    }
    if (choice === "cancel") {
      const response = await daemonFetch(this.target, `/api/sessions/${this.sessionId}/cancel`, { method: "POST" });
      const body = (await response.json()) as { cancelled?: boolean };
      process.stderr.write(
        body.cancelled
          ? `Cancelled the turn of session ${this.sessionId}.\n`
          : `Nothing to cancel: session ${this.sessionId}'s turn had ended.\n`,
      );
      this.#stop(RUN_EXIT_CANCELLED);
    } else if (choice === "leave") {
      process.stderr.write(
        `Detached: the turn goes on in agentd. Re-attach (Ctrl-C then c cancels it): ${reattachCommand(this.sessionId, { after: this.last }, this.location)}\n`,
      );
      this.#stop(this.interactive ? 0 : RUN_EXIT_CANCELLED);
    } else if (this.#asking) {
      this.#queue.unshift(this.#asking);
    }
  }

  /** Asks until a key means something; a second Ctrl-C leaves. Undefined when the question was cancelled. */
  async #askInterrupt(): Promise<InterruptChoice | undefined> {
    for (;;) {
      const key = await this.prompt.ask(INTERRUPT_QUESTION);
      if (key === undefined) return undefined;
      const choice = key === CTRL_C ? "leave" : parseInterruptAnswer(key);
      process.stderr.write(`${key === CTRL_C || key === "\r" ? "" : key}\n`);
      if (choice) return choice;
      process.stderr.write("Press c (cancel the turn), l (leave it running) or w (watch on).\n");
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
    // A replayed question may long be decided: the caller asks the ones still pending after the replay.
    if (event.type === "approval_required" && event.seq > this.historyUntil) this.#needDecisions(event.data.approvals as PendingApproval[]);
    if (event.seq >= this.historyUntil && this.#afterReplay.length) {
      const pending = this.#afterReplay.filter((a) => !this.#decided.has(a.approval_id));
      this.#afterReplay = [];
      if (pending.length) this.#needDecisions(pending);
    }
  }

  #afterReplay: PendingApproval[] = [];

  /** Questions pending when the replay was read: asked once the replay is printed. */
  askAfterReplay(approvals: PendingApproval[]): void {
    if (approvals.length === 0) return;
    if (this.last >= this.historyUntil) this.#needDecisions(approvals);
    else this.#afterReplay = approvals;
  }

  #needDecisions(approvals: PendingApproval[]): void {
    // The question (or the no-TTY notice) starts its own line, not the end of the model's text.
    this.#lineBreak();
    if (!this.interactive) {
      process.stderr.write("The agent waits for a decision:\n");
      for (const a of approvals) process.stderr.write(`  ${a.summary}\n    agentd approve ${a.approval_id} once|session|deny\n`);
      process.stderr.write(`Then follow the turn with: ${reattachCommand(this.sessionId, { after: this.last }, this.location)}\n`);
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
