import { createParser, type EventSourceMessage, type EventSourceParser } from "eventsource-parser";

export type { EventSourceMessage };

/** Raised when one SSE event outgrows the buffer: a broken or hostile upstream, not a slow one. */
export class SseOverflowError extends Error {
  constructor(limit: number) {
    super(`an SSE event exceeded ${limit} bytes`);
    this.name = "SseOverflowError";
  }
}

/**
 * Incremental SSE decoder over eventsource-parser: feed it bytes as they arrive (events split
 * across reads, comments, keep-alives and CRLF are the parser's job) and get back the events each
 * read completed. The buffer is bounded.
 */
export class SseDecoder {
  #events: EventSourceMessage[] = [];
  #overflow = false;
  readonly #decoder = new TextDecoder();
  readonly #parser: EventSourceParser;

  constructor(private readonly maxEventBytes = 4 * 1024 * 1024) {
    this.#parser = createParser({
      onEvent: (event) => void this.#events.push(event),
      onError: (error) => {
        // Unknown fields and bad retry values are ignorable per the SSE spec; only overflow is fatal.
        if (error.type === "max-buffer-size-exceeded") this.#overflow = true;
      },
      maxBufferSize: maxEventBytes,
    });
  }

  push(bytes: Uint8Array): EventSourceMessage[] {
    this.#parser.feed(this.#decoder.decode(bytes, { stream: true }));
    return this.#take();
  }

  /** Flushes a final event that lacked its blank line. */
  end(): EventSourceMessage[] {
    // A blank line dispatches a pending event; after a clean end it dispatches nothing.
    this.#parser.feed(`${this.#decoder.decode()}\n\n`);
    return this.#take();
  }

  #take(): EventSourceMessage[] {
    if (this.#overflow) throw new SseOverflowError(this.maxEventBytes);
    if (this.#events.length === 0) return EMPTY;
    const events = this.#events;
    this.#events = [];
    return events;
  }
}

const EMPTY: EventSourceMessage[] = [];
