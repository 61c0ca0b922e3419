import type { Logger } from "../core/log/index.ts";
import { runInBackground } from "../core/process/index.ts";
import type { DebugSidecar } from "./debugSidecar.ts";

/** Names the session a model request belongs to; the shared client's fetch reads it and strips it. */
export const SESSION_HEADER = "x-agentd-session";

/** What a session holds while it is busy: its debug sidecar and the note for its next request. */
export interface ModelChannel {
  sidecar?: DebugSidecar;
  /** The sidecar's summary of the next request, set just before it is sent. */
  note?: Record<string, unknown>;
}

/**
 * The open channels of busy sessions only: a channel is made on first use and released (its
 * sidecar written out and closed) when the session's turn ends or pauses, so thousands of idle
 * sessions hold neither memory nor file descriptors.
 */
export class SessionChannels {
  readonly #open = new Map<string, ModelChannel>();
  // Released sidecars still writing out, by session: closeAll waits for them, and the session's next
  // turn takes its sidecar back, since two writers on one file would rotate it under each other.
  readonly #closing = new Map<string, { sidecar: DebugSidecar; done: Promise<void> }>();

  constructor(
    private readonly makeSidecar: (sessionId: string) => DebugSidecar | undefined,
    private readonly logger: Logger,
  ) {}

  get(sessionId: string): ModelChannel {
    let channel = this.#open.get(sessionId);
    if (!channel) {
      channel = { sidecar: this.#closing.get(sessionId)?.sidecar ?? this.makeSidecar(sessionId) };
      this.#open.set(sessionId, channel);
    }
    return channel;
  }

  /** The channel if one is open (the fetch of a request whose session has none records nothing). */
  peek(sessionId: string): ModelChannel | undefined {
    return this.#open.get(sessionId);
  }

  /** Forgets the session's channel; its sidecar writes what is queued and closes in the background. */
  release(sessionId: string): void {
    const channel = this.#open.get(sessionId);
    if (!channel) return;
    this.#open.delete(sessionId);
    const sidecar = channel.sidecar;
    if (!sidecar) return;
    const closing = { sidecar, done: Promise.resolve() };
    // The entry goes when the close ends, failed or not (runInBackground logs and counts a failure).
    closing.done = runInBackground(
      "agent.sidecar_close",
      async () => {
        try {
          await sidecar.close();
        } finally {
          if (this.#closing.get(sessionId) === closing) this.#closing.delete(sessionId);
        }
      },
      { session: sessionId },
      this.logger,
    ).done;
    this.#closing.set(sessionId, closing);
  }

  get size(): number {
    return this.#open.size;
  }

  async closeAll(): Promise<void> {
    const open = [...this.#open.values()];
    this.#open.clear();
    await Promise.all([...open.map((channel) => channel.sidecar?.close()), ...[...this.#closing.values()].map((closing) => closing.done)]);
  }
}

/** Takes the note set for the next request, so it describes that request only. */
export function takeNote(channel: ModelChannel): Record<string, unknown> | undefined {
  const note = channel.note;
  channel.note = undefined;
  return note;
}
