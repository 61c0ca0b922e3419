/**
 * Protocol Buffers' wire format, written forward into one growing buffer: varints, fixed64,
 * length-delimited fields. A nested message is opened with `begin` and closed with `end`, which
 * writes its length in front of it: `begin` keeps as many bytes for the length as the caller
 * expects it to take, and `end` moves the message when it took another number. Only what OTLP's
 * trace export needs. One writer is reused batch after batch (`reset`), so its buffer is grown and
 * paged in once.
 */

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH_DELIMITED = 2;
const TWO_TO_32 = 2 ** 32;

export class ProtobufWriter {
  #buffer: Uint8Array;
  #view: DataView;
  #at = 0;

  constructor(capacity = 64 * 1024) {
    this.#buffer = new Uint8Array(capacity);
    this.#view = new DataView(this.#buffer.buffer);
  }

  /** Starts over at the buffer's beginning; what `bytes` returned before is overwritten. */
  reset(): void {
    this.#at = 0;
  }

  /** The buffer's size: what the writer holds on to between uses. */
  get capacity(): number {
    return this.#buffer.length;
  }

  /** The bytes written so far (a view of the writer's buffer: copy or send it before writing more). */
  bytes(): Uint8Array {
    return this.#buffer.subarray(0, this.#at);
  }

  /** A field's key: its number and wire type. */
  #tag(field: number, wire: number): void {
    this.#varint(field * 8 + wire);
  }

  #varint(value: number): void {
    this.#room(10);
    // Doubles hold integers to 2^53 exactly; a shift would cut them to 32 bits.
    while (value >= 0x80) {
      this.#buffer[this.#at++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    this.#buffer[this.#at++] = value;
  }

  /** A non-negative integer field (uint32, int64 ≥ 0, an enum, a bool as 0/1). */
  uint(field: number, value: number): void {
    this.#tag(field, WIRE_VARINT);
    this.#varint(value);
  }

  /**
   * A signed int64: a negative value is its two's complement over 64 bits, ten bytes on the wire.
   * `value` must be a safe integer.
   */
  int64(field: number, value: number): void {
    if (value >= 0) {
      this.uint(field, value);
      return;
    }
    this.#tag(field, WIRE_VARINT);
    this.#room(10);
    let n = 2n ** 64n + BigInt(value);
    for (let i = 0; i < 9; i++) {
      this.#buffer[this.#at++] = Number(n & 0x7fn) | 0x80;
      n >>= 7n;
    }
    this.#buffer[this.#at++] = Number(n);
  }

  double(field: number, value: number): void {
    this.#tag(field, WIRE_FIXED64);
    this.#room(8);
    this.#view.setFloat64(this.#at, value, true);
    this.#at += 8;
  }

  /** A fixed64 field of `micros × 1000` (Unix nanoseconds from whole microseconds, beyond a double's exact range). */
  fixed64FromMicros(field: number, micros: number): void {
    this.#tag(field, WIRE_FIXED64);
    this.#room(8);
    const lowMicros = micros % TWO_TO_32;
    const highMicros = Math.floor(micros / TWO_TO_32);
    const lowProduct = lowMicros * 1000;
    const low = lowProduct % TWO_TO_32;
    const high = highMicros * 1000 + Math.floor(lowProduct / TWO_TO_32);
    this.#view.setUint32(this.#at, low, true);
    this.#view.setUint32(this.#at + 4, high, true);
    this.#at += 8;
  }

  string(field: number, value: string): void {
    this.#tag(field, WIRE_LENGTH_DELIMITED);
    const length = value.length;
    if (length < 0x80) {
      // Short ASCII, nearly every string a span holds: copied unit by unit, no encoder call.
      this.#room(length + 1);
      const buffer = this.#buffer;
      const start = this.#at + 1;
      let i = 0;
      for (; i < length; i++) {
        const code = value.charCodeAt(i);
        if (code >= 0x80) break;
        buffer[start + i] = code;
      }
      if (i === length) {
        buffer[start - 1] = length;
        this.#at = start + length;
        return;
      }
    }
    // UTF-8 takes at most three bytes per UTF-16 unit: the length field is kept that long, and the
    // text goes into the room there is, the buffer grown to that worst case only when it falls short.
    const opened = this.begin(field, Math.min(3, varintSize(length * 3)), false);
    let { read, written } = encoder.encodeInto(value, this.#buffer.subarray(this.#at));
    if (read < length) {
      this.#room(length * 3);
      ({ read, written } = encoder.encodeInto(value, this.#buffer.subarray(this.#at)));
    }
    this.#at += written;
    this.end(opened);
  }

  /** A bytes field from lowercase or uppercase hex (an OTLP trace or span id). */
  hexBytes(field: number, hex: string): void {
    const length = hex.length >> 1;
    this.#tag(field, WIRE_LENGTH_DELIMITED);
    this.#room(length + 5);
    this.#varint(length);
    for (let i = 0; i < length; i++) this.#buffer[this.#at++] = (hexDigit(hex, 2 * i) << 4) | hexDigit(hex, 2 * i + 1);
  }

  /** Bytes already encoded (a cached field), copied as they are. */
  raw(bytes: Uint8Array): void {
    const length = bytes.length;
    this.#room(length);
    // A loop: a few dozen bytes copy faster in JS than through a native `set` call.
    const buffer = this.#buffer;
    let at = this.#at;
    for (let i = 0; i < length; i++) buffer[at++] = bytes[i]!;
    this.#at = at;
  }

  /**
   * Opens a length-delimited field (a nested message): its key, then `lengthBytes` kept for the
   * length (1 to 3: 1 below 128 bytes, 2 below 16 KiB, 3 below 2 MiB). Returns a mark for `end`
   * (where the message starts and what was kept, in one number).
   * `tag: false` when the key is written already.
   */
  begin(field: number, lengthBytes = 1, tag = true): number {
    if (tag) this.#tag(field, WIRE_LENGTH_DELIMITED);
    this.#room(lengthBytes);
    this.#at += lengthBytes;
    return this.#at * 4 + lengthBytes;
  }

  /** Closes the field `begin` opened: writes its length, moving the message when the length took other than the bytes kept. */
  end(opened: number): void {
    const kept = opened % 4;
    const start = (opened - kept) / 4;
    const length = this.#at - start;
    if (kept === 1 && length < 0x80) {
      this.#buffer[start - 1] = length;
      return;
    }
    const size = varintSize(length);
    if (size !== kept) {
      this.#room(size - kept);
      this.#buffer.copyWithin(start + size - kept, start, this.#at);
    }
    this.#at = start - kept;
    this.#varint(length);
    this.#at += length;
  }

  #room(bytes: number): void {
    if (this.#at + bytes <= this.#buffer.length) return;
    const grown = new Uint8Array(Math.max(this.#buffer.length * 2, this.#at + bytes));
    grown.set(this.#buffer.subarray(0, this.#at));
    this.#buffer = grown;
    this.#view = new DataView(grown.buffer);
  }
}

const encoder = new TextEncoder();

function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    size++;
  }
  return size;
}

function hexDigit(hex: string, index: number): number {
  const code = hex.charCodeAt(index);
  // 0-9, then a-f / A-F (bit 0x20 folds case).
  return code <= 0x39 ? code - 0x30 : (code | 0x20) - 0x57;
}
