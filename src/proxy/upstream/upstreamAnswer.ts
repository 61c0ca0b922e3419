/** The headers of an upstream answer as the proxy reads them: a fetch Response's Headers are one. */
export interface AnswerHeaders {
  /** Every value of `name` (any case) joined by ", ", or null. */
  get(name: string): string | null;
  /** Each header name (lower case) once, with its values joined by ", ". */
  forEach(fn: (value: string, name: string) => void): void;
}

/** One read of an answer's body, as a ReadableStream reader gives it. */
export type BodyRead = { done: false; value: Uint8Array } | { done: true; value?: undefined };

/** What reads an answer's body: a stream's reader, or agentd's own client's lighter one (http1Answer.ts). */
export interface BodyReader {
  read(): Promise<BodyRead>;
  cancel(): Promise<void> | void;
  /** True once every byte of the body was read and the body ended: a read would say done. Where known. */
  readonly drained?: boolean;
}

/**
 * An upstream's answer as the dispatcher and the routes read it: a fetch Response is one; agentd's
 * own HTTP/1.1 client answers with an Http1Answer, which spares a Response, its Headers and a
 * ReadableStream per call.
 */
export interface UpstreamAnswer {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: AnswerHeaders;
  /** The whole body as text (UTF-8, a leading BOM dropped, as Response.text() does). */
  text(): Promise<string>;
  readonly body: ReadableStream<Uint8Array> | null;
  /** A reader of the body without a ReadableStream, where the answer has one. */
  reader?(): BodyReader;
  /**
   * The whole body as text at once, where the answer can tell it has all come (no more than
   * `limit` bytes) and nobody took it; else undefined, and the body is left to text() or a reader.
   */
  takeWholeText?(limit: number): string | undefined;
}

const utf8 = new TextDecoder();

/** A body's pieces as text, decoded as Response.text() decodes: a leading byte order mark dropped, a bad byte replaced. */
export function bodyText(pieces: readonly Uint8Array[]): string {
  if (pieces.length === 0) return "";
  return utf8.decode(pieces.length === 1 ? pieces[0] : Buffer.concat(pieces));
}

/** The body's reader: the answer's own when it has one, else its stream's. Taken once per answer. */
export function readerOf(answer: UpstreamAnswer): BodyReader | undefined {
  if (answer.reader) return answer.reader();
  return answer.body?.getReader() as BodyReader | undefined;
}
