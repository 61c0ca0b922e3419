/**
 * HTTP/1.1 on the wire, for agentd's own upstream client (http1Client.ts): the request's head, the
 * answer's head, and how its body is framed (Content-Length, chunked, or until the connection
 * closes). Pure: bytes in, values out.
 */

/** Raised for an answer that is not HTTP/1.1 as agentd reads it: the connection is not reused. */
export class Http1WireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Http1WireError";
  }
}

/** Raised for a request header that would break the request's framing (CR, LF or NUL in it). */
export class Http1HeaderError extends Error {
  readonly code = "invalid_header";
  constructor(message: string) {
    super(message);
    this.name = "Http1HeaderError";
  }
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FORBIDDEN_IN_VALUE = /[\r\n\0]/;
/** Framing is this client's: a caller's own would contradict it. */
const FRAMING = new Set(["host", "content-length", "transfer-encoding", "connection"]);
/**
 * Names already judged, as each comes (clients and upstreams send the same few on every request):
 * what the wire gets for it, or null to leave it out. Bounded in number and length (a client names
 * its x-stainless-* headers as it likes): any other name is judged each time.
 */
const KNOWN_NAMES_MAX = 512;
const KNOWN_NAME_LENGTH_MAX = 64;
const requestNames = new Map<string, string | null>();
const answerNames = new Map<string, string>();

/** What the client needs of an upstream URL on every request. */
export interface UrlParts {
  /** The request line after its method, the Host header and the start of Content-Length. */
  target: string;
  /** The connection pool's key. */
  origin: string;
}

const urlParts = new WeakMap<URL, UrlParts>();

/**
 * An upstream URL's parts, read once: the URL's getters each build a string. A URL object is read
 * at its first request (Http1Request.url): one changed later is not read again.
 */
export function partsOf(url: URL): UrlParts {
  let parts = urlParts.get(url);
  if (parts === undefined) {
    parts = { target: ` ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-length: `, origin: url.origin };
    urlParts.set(url, parts);
  }
  return parts;
}

/**
 * The request's head. Header names and values come partly from clients (user-agent, x-stainless-*):
 * one holding a line break would smuggle a header, or a second request, to the upstream.
 */
export function requestHead(method: string, url: URL, headers: Record<string, string>, bodyBytes: number): string {
  let head = `${method}${partsOf(url).target}${bodyBytes}\r\n`;
  for (const name in headers) {
    const value = headers[name]!;
    let line = requestNames.get(name);
    if (line === undefined) line = requestLine(name);
    if (FORBIDDEN_IN_VALUE.test(value)) throw new Http1HeaderError(`Cannot send header "${name}": its value holds a line break or NUL`);
    if (line !== null) head += `${line}${value}\r\n`;
  }
  return `${head}\r\n`;
}

/** How a header name starts its line (`name: `), or null for a framing header; refused when no valid name. */
function requestLine(name: string): string | null {
  if (!HEADER_NAME.test(name)) throw new Http1HeaderError(`Cannot send header "${name}": not a valid header name`);
  const line = FRAMING.has(name.toLowerCase()) ? null : `${name}: `;
  if (requestNames.size < KNOWN_NAMES_MAX && name.length <= KNOWN_NAME_LENGTH_MAX) requestNames.set(name, line);
  return line;
}

export interface ResponseHead {
  status: number;
  headers: Array<[string, string]>;
  /** Bytes the head took, its blank line included. */
  length: number;
  /** An HTTP/1.0 answer: its connection is kept only when it says so. */
  http10: boolean;
}

const HEAD_END = Buffer.from("\r\n\r\n");

/** The answer's head when `buffer` holds all of it, else undefined; throws on a malformed or oversized head. */
export function parseResponseHead(buffer: Buffer, maxBytes: number): ResponseHead | undefined {
  const end = buffer.indexOf(HEAD_END);
  if (end < 0) {
    if (buffer.length > maxBytes) throw new Http1WireError(`the upstream's response head exceeds ${maxBytes} bytes`);
    return undefined;
  }
  if (end > maxBytes) throw new Http1WireError(`the upstream's response head exceeds ${maxBytes} bytes`);
  const text = buffer.toString("latin1", 0, end);
  let lineEnd = text.indexOf("\r\n");
  if (lineEnd < 0) lineEnd = text.length;
  const statusLine = text.slice(0, lineEnd);
  // A Response holds no status outside 1xx to 5xx.
  const status = STATUS_LINE.exec(statusLine);
  if (!status)
    throw new Http1WireError(`the upstream answered with a status line that is not HTTP/1.1: ${JSON.stringify(statusLine.slice(0, 80))}`);
  const headers: Array<[string, string]> = [];
  while (lineEnd < text.length) {
    const start = lineEnd + 2;
    lineEnd = text.indexOf("\r\n", start);
    if (lineEnd < 0) lineEnd = text.length;
    const colon = text.indexOf(":", start);
    if (colon <= start || colon >= lineEnd)
      throw new Http1WireError(`the upstream sent a header line without a name: ${shownLine(text, start, lineEnd)}`);
    const rawName = text.slice(start, colon);
    const name = answerNames.get(rawName) ?? answerName(rawName);
    const value = text.slice(colon + 1, lineEnd).trim();
    // A name or value a Response's Headers refuses would throw where the answer is handed over.
    if (name === undefined || FORBIDDEN_IN_VALUE.test(value))
      throw new Http1WireError(`the upstream sent an invalid header line: ${shownLine(text, start, lineEnd)}`);
    headers.push([name, value]);
  }
  return { status: Number(status[2]), headers, length: end + 4, http10: status[1] === "0" };
}

const STATUS_LINE = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: |$)/;

/** A header name as it came, lower-cased; undefined when it is no valid name. */
function answerName(rawName: string): string | undefined {
  const keep = answerNames.size < KNOWN_NAMES_MAX && rawName.length <= KNOWN_NAME_LENGTH_MAX;
  // A kept name is a copy of its own: a slice of the head shares the head's whole text, which it would keep alive.
  const raw = keep ? Buffer.from(rawName, "latin1").toString("latin1") : rawName;
  const name = raw.trim().toLowerCase();
  if (!HEADER_NAME.test(name)) return undefined;
  if (keep) answerNames.set(raw, name);
  return name;
}

/** A head's line as an error message shows it: quoted, its first 80 characters. */
function shownLine(text: string, start: number, end: number): string {
  return JSON.stringify(text.slice(start, Math.min(end, start + 80)));
}

export type BodyFraming = { kind: "none" } | { kind: "length"; bytes: number } | { kind: "chunked" } | { kind: "close" };

/** How the answer's body ends (RFC 9112 §6.3): chunked over a length; neither means at close. */
export function bodyFraming(status: number, headers: ReadonlyArray<[string, string]>): BodyFraming {
  if (status === 204 || status === 304 || (status >= 100 && status < 200)) return { kind: "none" };
  let length: string | undefined;
  // Repeated Transfer-Encoding headers form one list: its last coding decides.
  let lastCoding: string | undefined;
  for (const [name, value] of headers) {
    if (name === "transfer-encoding") lastCoding = value.toLowerCase().split(",").at(-1)!.trim();
    if (name === "content-length") {
      if (length !== undefined && length !== value) throw new Http1WireError("the upstream sent two different Content-Length headers");
      length = value;
    }
  }
  if (lastCoding !== undefined) return lastCoding === "chunked" ? { kind: "chunked" } : { kind: "close" };
  if (length === undefined) return { kind: "close" };
  if (!/^\d+$/.test(length)) throw new Http1WireError(`the upstream sent an invalid Content-Length: ${JSON.stringify(length)}`);
  return { kind: "length", bytes: Number(length) };
}

/**
 * Whether the connection may carry another request after this answer: unless it says close, or,
 * from an HTTP/1.0 server, unless it says keep-alive (RFC 9112 §9.3).
 */
export function keepsAlive(headers: ReadonlyArray<[string, string]>, framing: BodyFraming, http10 = false): boolean {
  if (framing.kind === "close") return false;
  // Both framings at once (RFC 9112 §6.3): whoever read the length instead would desync on this connection.
  if (framing.kind === "chunked" && headers.some(([name]) => name === "content-length")) return false;
  let keep = !http10;
  for (const [name, value] of headers) {
    if (name !== "connection") continue;
    const options = value.toLowerCase();
    if (options.includes("close")) return false;
    if (options.includes("keep-alive")) keep = true;
  }
  return keep;
}

/** Kept this long below a server's `Keep-Alive: timeout=`, so a reuse does not race its close. */
const KEEP_ALIVE_MARGIN_MS = 1_000;
/** No longer than this even when a server offers more: a NAT or balancer may drop a silent connection unannounced. */
const MAX_IDLE_REUSE_MS = 60_000;
/** Without a hint: local model servers drop idle connections after ~5 s (uvicorn, Node), unannounced. */
const PLAIN_IDLE_REUSE_MS = 4_000;

const KEEP_ALIVE_TIMEOUT = /(?:^|[\s,;])timeout\s*=\s*"?(\d+)/gi;

/**
 * How long an idle connection may be reused after this answer: the server's `Keep-Alive: timeout=`
 * less a margin; without one, a few seconds over plain HTTP and the longest window over TLS, where a
 * new connection costs a handshake with a remote provider (a stale one is retried, see Http1Client).
 * 0: do not reuse.
 */
export function idleReuseMs(headers: ReadonlyArray<[string, string]>, tls: boolean): number {
  // Several timeouts (a proxy's and the server's, say): the shortest, as whichever closes first ends the connection.
  let seconds: number | undefined;
  for (const [name, value] of headers)
    if (name === "keep-alive")
      for (const timeout of value.matchAll(KEEP_ALIVE_TIMEOUT)) seconds = Math.min(seconds ?? Number.POSITIVE_INFINITY, Number(timeout[1]));
  if (seconds === undefined) return tls ? MAX_IDLE_REUSE_MS : PLAIN_IDLE_REUSE_MS;
  return Math.min(MAX_IDLE_REUSE_MS, Math.max(0, seconds * 1000 - KEEP_ALIVE_MARGIN_MS));
}

const CR = 13;
const LF = 10;
/** Longest chunk-size line (extensions included) or trailer line accepted. */
const MAX_LINE_BYTES = 4096;

enum ChunkState {
  Size,
  Extension,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  TrailerStart,
  Trailer,
  TrailerLf,
  EndLf,
  Done,
}

/** A hex digit's value, or -1. */
function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * Removes chunked framing (RFC 9112 §7.1) as bytes arrive, split anywhere: a byte-wise state
 * machine, so a stream of small chunks costs no string per chunk. Extensions and trailers are
 * skipped; a size that is not hex, longer than 12 digits, or a line past 4 KiB is an error.
 */
export class ChunkedDecoder {
  #state = ChunkState.Size;
  #size = 0;
  #digits = 0;
  #left = 0;
  #lineBytes = 0;

  get done(): boolean {
    return this.#state === ChunkState.Done;
  }

  /** The body bytes these bytes complete (pieces of the input, not copies); `rest` is what follows the body. */
  push(bytes: Buffer): { body: Buffer[]; rest: Buffer | undefined } {
    const body: Buffer[] = [];
    const n = bytes.length;
    let i = 0;
    while (i < n && this.#state !== ChunkState.Done) {
      switch (this.#state) {
        case ChunkState.Size: {
          const c = bytes[i]!;
          const value = hexValue(c);
          if (value >= 0) {
            if (++this.#digits > 12) throw new Http1WireError("a chunk size has more than 12 hex digits");
            this.#size = this.#size * 16 + value;
            i++;
          } else if (this.#digits > 0 && (c === 0x3b || c === 0x20 || c === 0x09)) {
            this.#state = ChunkState.Extension;
          } else if (this.#digits > 0 && c === CR) {
            this.#state = ChunkState.SizeLf;
            i++;
          } else throw new Http1WireError(`a chunk size is not hexadecimal (byte ${c})`);
          break;
        }
        case ChunkState.Extension:
        case ChunkState.Trailer: {
          const cr = bytes.indexOf(CR, i);
          const end = cr < 0 ? n : cr;
          this.#lineBytes += end - i;
          if (this.#lineBytes > MAX_LINE_BYTES) throw new Http1WireError("a chunked body's line is too long");
          i = end;
          if (cr >= 0) {
            this.#state = this.#state === ChunkState.Extension ? ChunkState.SizeLf : ChunkState.TrailerLf;
            this.#lineBytes = 0;
            i++;
          }
          break;
        }
        case ChunkState.SizeLf:
          this.#expect(bytes[i++]!, LF);
          this.#state = this.#size === 0 ? ChunkState.TrailerStart : ChunkState.Data;
          this.#left = this.#size;
          this.#size = 0;
          this.#digits = 0;
          break;
        case ChunkState.Data: {
          const take = Math.min(this.#left, n - i);
          body.push(bytes.subarray(i, i + take));
          i += take;
          this.#left -= take;
          if (this.#left === 0) this.#state = ChunkState.DataCr;
          break;
        }
        case ChunkState.DataCr:
          this.#expect(bytes[i++]!, CR);
          this.#state = ChunkState.DataLf;
          break;
        case ChunkState.DataLf:
          this.#expect(bytes[i++]!, LF);
          this.#state = ChunkState.Size;
          break;
        case ChunkState.TrailerStart:
          if (bytes[i] === CR) {
            this.#state = ChunkState.EndLf;
            i++;
          } else this.#state = ChunkState.Trailer;
          break;
        case ChunkState.TrailerLf:
          this.#expect(bytes[i++]!, LF);
          this.#state = ChunkState.TrailerStart;
          break;
        case ChunkState.EndLf:
          this.#expect(bytes[i++]!, LF);
          this.#state = ChunkState.Done;
          break;
      }
    }
    return { body, rest: this.#state === ChunkState.Done && i < n ? bytes.subarray(i) : undefined };
  }

  #expect(c: number, wanted: number): void {
    if (c !== wanted) throw new Http1WireError("a chunked body's framing is broken (a line did not end in CRLF where it had to)");
  }
}
