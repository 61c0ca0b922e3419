import { reportsItsEnd } from "../../http/streamEnd.ts";
import { ClientGoneError } from "./clientGone.ts";
import { parseStreamData, type Committed } from "./dispatcher.ts";
import type { EventSourceMessage } from "./sseDecoder.ts";
import { UpstreamFailure } from "./upstreamFailure.ts";

type StreamCommitted = Extract<Committed, { kind: "stream" }>;

/** How one API shapes the events it relays; each returns the SSE frames to send. */
export interface RelayShape {
  /** Frames before the first upstream event (e.g. response.created). */
  opening(): string;
  /**
   * Frames for one upstream event; `end: true` once the answer is done: the upstream said so, or
   * agentd ended it (a stop sequence), then with `cut: true` so the rest is not read but aborted.
   */
  event(event: EventSourceMessage, data: Record<string, unknown> | "[DONE]"): { frames: string; end: boolean; cut?: boolean };
  /**
   * The frames for an event relayed from its text alone, or undefined when its data must be parsed
   * (and go to `event`): a passthrough skips JSON.parse on the events that carry nothing it reads.
   */
  passthrough?(event: EventSourceMessage): string | undefined;
  /** Closing frames when the upstream ended without its end marker but had finished its answer; throws when it had not. */
  endedEarly(): string;
  /** Error frames after a failure once the client already got bytes: never a silent 200. */
  failed(failure: UpstreamFailure): string;
  /** Called once with the outcome, for counting. */
  done(outcome: "ok" | "error" | "client_gone", failure?: UpstreamFailure): void;
}

/**
 * Streams the committed upstream to the client as a Bun direct stream: one loop writes each
 * upstream read's frames straight into the response (no queue, no promise per chunk) and waits when
 * the client is slow to take them (the write's promise), so a slow client slows the upstream read.
 * The idle deadline lives in the attempt; a client that goes away cancels the stream, which aborts
 * the upstream request.
 */
export function relayStream(
  committed: StreamCommitted,
  shape: RelayShape,
  onFailure: (failure: UpstreamFailure) => void,
): ReadableStream<Uint8Array> {
  const { attempt, response } = committed;
  let pending: { event: EventSourceMessage; data: Record<string, unknown> | "[DONE]" } | undefined = {
    event: committed.first,
    data: committed.firstData,
  };
  let started = false;
  let finished = false;
  let ended = () => {};
  const finish = (outcome: "ok" | "error" | "client_gone", failure?: UpstreamFailure) => {
    if (finished) return;
    finished = true;
    ended();
    shape.done(outcome, failure);
  };
  const stream = new ReadableStream<Uint8Array>({
    type: "direct",
    async pull(controller) {
      // A reader calls pull again after the first call settled: by then the whole answer was written.
      if (started) return;
      started = true;
      // Frames built but not yet written: on a failure they go out before the error frames.
      let frames = "";
      try {
        frames = shape.opening();
        for (;;) {
          let out: { frames: string; end: boolean; cut?: boolean } | undefined;
          if (pending) {
            out = shape.event(pending.event, pending.data);
            pending = undefined;
          } else {
            // The rest of a read's events without a promise each; nextEvent() reads when none is left.
            const event = attempt.takeBufferedEvent() ?? (await attempt.nextEvent(response));
            if (finished) return;
            if (event === undefined) {
              frames += shape.endedEarly();
              attempt.finish();
              controller.write(frames);
              controller.close();
              finish("ok");
              return;
            }
            // An event relayed as its text goes straight into the frames: no result object per event.
            const text = shape.passthrough?.(event);
            if (text !== undefined) frames += text;
            else out = shape.event(event, parseStreamData(event, response.status));
          }
          if (out) frames += out.frames;
          if (out?.end) {
            if (out.cut) attempt.abort();
            else attempt.drain(response);
            if (frames) controller.write(frames);
            controller.close();
            finish("ok");
            return;
          }
          // Events already read in the same upstream chunk go out in one write, not one each.
          if (frames && !attempt.hasBufferedEvent()) {
            const written = controller.write(frames);
            frames = "";
            // A promise: the client has not taken what was written yet; read on once it has.
            if (written instanceof Promise) await written;
            else controller.flush();
            if (finished) return;
          }
        }
      } catch (error) {
        attempt.abort();
        // Cancelled: the client left and cancel() counted it; nothing is left to write to.
        if (finished) return;
        if (error instanceof ClientGoneError) {
          finish("client_gone");
          controller.close();
          return;
        }
        const failure =
          error instanceof UpstreamFailure
            ? error
            : new UpstreamFailure("malformed", (error as Error).message, { status: response.status });
        onFailure(failure);
        controller.write(frames + shape.failed(failure));
        controller.close();
        finish("error", failure);
      }
    },
    cancel() {
      attempt.abort();
      finish("client_gone");
    },
  });
  // The server then follows the stream's end without a TransformStream of its own.
  ended = reportsItsEnd(stream);
  return stream;
}
