/**
 * Runs of a read's SSE text that a relay can pass on as the bytes they came in. An event
 * qualifies in its plainest form only, `data: X` then a blank line, both ended by LF, with one data
 * line: a relay that reframes its events writes exactly that, `data: ${event.data}\n\n`, so the bytes
 * it got are the bytes it would send. Any other field, a comment, CR line ends, a second data line or
 * an event `relayable` refuses ends the run. Pure.
 */

const PREFIX = "data: ";
const LF = 0x0a;

export interface DataRun {
  /** Where the run ends in the text, in UTF-16 units: where it was to start when no event qualifies. */
  end: number;
  /** How many events it holds. */
  events: number;
}

/** The run that starts at `from`. */
export function relayableRun(text: string, relayable: (data: string) => boolean, from = 0): DataRun {
  let at = from;
  let events = 0;
  for (;;) {
    if (!text.startsWith(PREFIX, at)) break;
    const lineEnd = text.indexOf("\n", at + PREFIX.length);
    // The event is complete only with its blank line.
    if (lineEnd < 0 || text.charCodeAt(lineEnd + 1) !== LF) break;
    const data = text.slice(at + PREFIX.length, lineEnd);
    // A CR would end the line there for an SSE parser: the data is not what it seems.
    if (data.includes("\r") || !relayable(data)) break;
    at = lineEnd + 2;
    events++;
  }
  return { end: at, events };
}

/** How many LFs `text` holds from `from` to `to`. */
export function lineFeeds(text: string, from: number, to: number): number {
  let count = 0;
  for (let at = text.indexOf("\n", from); at >= 0 && at < to; at = text.indexOf("\n", at + 1)) count++;
  return count;
}

/**
 * Where the bytes decoded into a text reach the spot after `count` more LFs from `from`: an LF byte
 * is never part of another UTF-8 character, even a malformed one, so counting them finds the same
 * spot in the bytes as in the text, whatever the text decoded to. A run's events hold two LFs each
 * (the data line's end and the blank line).
 */
export function afterLineFeeds(bytes: Uint8Array, from: number, count: number): number {
  let at = from;
  for (let left = count; left > 0; left--) at = bytes.indexOf(LF, at) + 1;
  return at;
}

/** A run's first event as parsed, and the rest of the run: the commit takes a stream's first event alone. */
export function splitFirstEvent(run: Uint8Array): { data: string; rest: Uint8Array } {
  const lineEnd = run.indexOf(LF);
  return { data: decoder.decode(run.subarray(PREFIX.length, lineEnd)), rest: run.subarray(lineEnd + 2) };
}

const decoder = new TextDecoder();
