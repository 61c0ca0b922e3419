/** Byte-level UTF-8 boundaries, so cutting terminal output never splits a character. */

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if ((lead & 0xe0) === 0xc0) return 2;
  if ((lead & 0xf0) === 0xe0) return 3;
  if ((lead & 0xf8) === 0xf0) return 4;
  return 1; // invalid lead byte: the decoder replaces it on its own
}

/** The largest index ≤ `index` that does not fall inside a multi-byte sequence. */
export function boundaryAtOrBefore(bytes: Uint8Array, index: number): number {
  let at = Math.max(0, Math.min(index, bytes.length));
  let steps = 0;
  while (at > 0 && at < bytes.length && isContinuation(bytes[at]!) && steps < 3) {
    at--;
    steps++;
  }
  return at;
}

/** Length of the prefix of `bytes` that does not end with an incomplete sequence (which may finish in the next read). */
export function completePrefixLength(bytes: Uint8Array): number {
  const start = Math.max(0, bytes.length - 3);
  for (let at = bytes.length - 1; at >= start; at--) {
    const byte = bytes[at]!;
    if (isContinuation(byte)) continue;
    return at + sequenceLength(byte) > bytes.length ? at : bytes.length;
  }
  return bytes.length;
}
