import { boundaryAtOrBefore } from "./utf8.ts";

/** The usual estimate for model tokens of terminal text. */
const BYTES_PER_TOKEN = 4;
// An escape sequence longer than this is treated as text when choosing where to cut.
const MAX_ESCAPE_LENGTH = 64;

export interface HeadTail {
  head: Uint8Array;
  tail: Uint8Array;
  omittedBytes: number;
}

/**
 * Keeps the first and last halves of a byte budget when `bytes` exceeds it (errors tend to be at
 * the end, the command's context at the start). Returns undefined when everything fits. Cuts never
 * split a UTF-8 character or an escape sequence.
 */
export function splitHeadTail(bytes: Uint8Array, maxBytes: number): HeadTail | undefined {
  if (bytes.length <= maxBytes) return undefined;
  const half = Math.floor(maxBytes / 2);
  const headEnd = safeCut(bytes, half);
  const tailStart = Math.max(headEnd, safeCut(bytes, bytes.length - (maxBytes - half)));
  return {
    head: bytes.subarray(0, headEnd),
    tail: bytes.subarray(tailStart),
    omittedBytes: tailStart - headEnd,
  };
}

export function truncationMarker(omittedBytes: number): string {
  return `\n[… ${omittedBytes} bytes of output truncated …]\n`;
}

export function maxBytesForTokens(maxTokens: number): number {
  return maxTokens * BYTES_PER_TOKEN;
}

/** Moves `index` back to a UTF-8 boundary, then before any escape sequence it would split. */
function safeCut(bytes: Uint8Array, index: number): number {
  const at = boundaryAtOrBefore(bytes, index);
  const floor = Math.max(0, at - MAX_ESCAPE_LENGTH);
  for (let escStart = at - 1; escStart >= floor; escStart--) {
    if (bytes[escStart] !== 0x1b) continue;
    return escapeEndsBefore(bytes, escStart, at) ? at : escStart;
  }
  return at;
}

function escapeEndsBefore(bytes: Uint8Array, escStart: number, end: number): boolean {
  const kind = bytes[escStart + 1];
  if (escStart + 1 >= end || kind === undefined) return false;
  if (kind === 0x5b /* [ CSI */) {
    for (let at = escStart + 2; at < end; at++) {
      const byte = bytes[at]!;
      if (byte >= 0x40 && byte <= 0x7e) return true;
    }
    return false;
  }
  if (kind === 0x5d /* ] OSC */) {
    for (let at = escStart + 2; at < end; at++) {
      if (bytes[at] === 0x07 || (bytes[at] === 0x1b && bytes[at + 1] === 0x5c && at + 1 < end)) return true;
    }
    return false;
  }
  return true;
}
