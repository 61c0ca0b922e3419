import { createParser, type EventSourceMessage, type EventSourceParser } from "eventsource-parser";
import { afterLineFeeds, lineFeeds, relayableRun } from "./sseDataRun.ts";

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
  /**
   * Everything fed so far ended with a blank line: the parser holds no part of an event. The text
   * decoder may hold a character's first bytes, but the text then starts with that character, never
   * with a run's `data: `. False before the first read, which may begin with a BOM.
   */
  #atBoundary = false;
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
    this.#parse(this.#decoder.decode(bytes, { stream: true }));
    return this.#take();
  }

  /**
   * As push, for a relay that passes some events on as they came: each run of plain `data:` events
   * that `relayable` accepts (sseDataRun.ts), where the parser holds nothing, comes back as the
   * read's own bytes and is never made into events; the rest is parsed. Items keep the read's order.
   */
  pushRelaying(bytes: Uint8Array, relayable: (data: string) => boolean): Array<EventSourceMessage | Uint8Array> {
    const text = this.#decoder.decode(bytes, { stream: true });
    const items: Array<EventSourceMessage | Uint8Array> = [];
    let at = 0;
    let atByte = 0;
    // Part of an event held from the last read (or the first read's start, with its BOM) is parsed first.
    let parseFirst = !this.#atBoundary;
    for (;;) {
      if (!parseFirst) {
        const run = relayableRun(text, relayable, at);
        if (run.events > 0) {
          const endByte = afterLineFeeds(bytes, atByte, 2 * run.events);
          items.push(atByte === 0 && endByte === bytes.length ? bytes : bytes.subarray(atByte, endByte));
          at = run.end;
          atByte = endByte;
          if (at === text.length) break;
        }
      }
      parseFirst = false;
      // The parser takes the text to the next event's end (one it relays as parsed, a comment, CRLF
      // lines), or all that is left; after a blank line it holds nothing.
      const cut = text.indexOf("\n\n", at);
      const stop = cut < 0 ? text.length : cut + 2;
      this.#parser.feed(at === 0 && stop === text.length ? text : text.slice(at, stop));
      for (const event of this.#take()) items.push(event);
      if (stop === text.length) break;
      atByte = afterLineFeeds(bytes, atByte, lineFeeds(text, at, stop));
      at = stop;
    }
    this.#atBoundary = text.endsWith("\n\n");
    return items;
  }

  #parse(text: string): void {
    this.#parser.feed(text);
    this.#atBoundary = text.endsWith("\n\n");
  }

  /** Flushes a final event that lacked its blank line. */
  end(): EventSourceMessage[] {
    // A blank line dispatches a pending event; after a clean end it dispatches nothing.
    this.#parser.feed(`${this.#decoder.decode()}\n\n`);
    this.#atBoundary = false;
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
