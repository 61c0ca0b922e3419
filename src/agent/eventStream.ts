import type { AgentEvent, SessionEvents } from "./sessionEvents.ts";

export interface EventStreamOptions {
  events: SessionEvents;
  sessionId: string;
  /** Send the events numbered after this one. */
  after: number;
  heartbeatMs: number;
  /** Checked after each event and once after the replay: true ends the stream. */
  shouldClose(last: AgentEvent | undefined): boolean;
}

const encoder = new TextEncoder();

function formatSse(event: AgentEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify({ seq: event.seq, turn_id: event.turn_id, ts: event.ts, ...event.data })}\n\n`;
}

/** Stored events are replayed a page per pull, so a long history streams at the client's pace. */
const REPLAY_PAGE = 500;

/**
 * A Server-Sent Events response of a session's events: the stored ones after `after`, then live
 * ones as they are appended. Listening starts before the replay, so nothing falls in between;
 * a client that goes away only stops its own stream, never the turn.
 */
export function sessionEventStream(options: EventStreamOptions): Response {
  let last = options.after;
  let closed = false;
  let replaying = true;
  const live: AgentEvent[] = [];
  let cleanup = () => {};
  let deliver: (event: AgentEvent) => void = () => {};
  let close = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      close = () => {
        if (closed) return;
        closed = true;
        cleanup();
        controller.close();
      };
      deliver = (event: AgentEvent) => {
        if (closed || event.seq <= last) return;
        last = event.seq;
        controller.enqueue(encoder.encode(formatSse(event)));
        if (options.shouldClose(event)) close();
      };
      const unsubscribe = options.events.subscribe(options.sessionId, (event) => (replaying ? live.push(event) : deliver(event)));
      const heartbeat = setInterval(() => !closed && controller.enqueue(encoder.encode(": heartbeat\n\n")), options.heartbeatMs);
      cleanup = () => {
        unsubscribe();
        clearInterval(heartbeat);
      };
      controller.enqueue(encoder.encode(": agentd session events\n\n"));
    },
    pull() {
      // Live events are pushed as they come; only the replay waits for the client to ask.
      if (!replaying || closed) return;
      const page = options.events.after(options.sessionId, last, REPLAY_PAGE);
      for (const event of page) deliver(event);
      if (page.length > 0 || closed) return;
      replaying = false;
      for (const event of live.splice(0)) deliver(event);
      if (!closed && options.shouldClose(undefined)) close();
    },
    cancel() {
      closed = true;
      cleanup();
    },
  });
  return new Response(body, {
    headers: {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    },
  });
}
