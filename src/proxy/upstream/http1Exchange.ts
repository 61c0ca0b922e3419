import type { BodyFraming, ChunkedDecoder } from "./http1Wire.ts";
import { type AnswerFlow, Http1Answer } from "./http1Answer.ts";
import type { CallAbort } from "./callAbort.ts";

/** The connection as its exchange sees it. */
export interface ExchangeConnection {
  readonly socket: { pause(): void; resume(): void };
  readonly closed: boolean;
  readonly exchange: Http1Exchange | undefined;
}

/** What the client does for an exchange it owns: give it up (the connection is cut, the call or its answer fails). */
export type Abandon = (connection: ExchangeConnection, exchange: Http1Exchange, error?: Error) => void;

/**
 * One call's answer on its connection: the framing its head set, the answer handed to the caller
 * (at its head, or once it came whole when the caller buffers it), and the flow the answer's reader
 * drives. One object per call: it was a dozen closures and objects, made on every proxied request.
 */
export class Http1Exchange implements AnswerFlow {
  head?: { status: number; headers: Array<[string, string]>; framing: BodyFraming; http10: boolean };
  chunked?: ChunkedDecoder;
  /** Body bytes still to come under a Content-Length. */
  left = 0;
  gotBytes = false;
  #answer: Http1Answer | undefined;
  #settled = false;
  /** The call's abort listener: gives the exchange up. */
  readonly onAbort = () => this.abandon(this.connection, this, abortError());

  constructor(
    private readonly connection: ExchangeConnection,
    private readonly abort: CallAbort,
    /** A non-streamed answer is read whole before it is handed over, up to this many bytes. */
    private readonly bufferUpTo: number | undefined,
    private readonly resolve: (answer: Http1Answer) => void,
    private readonly reject: (error: Error) => void,
    private readonly abandon: Abandon,
  ) {}

  pause(): void {
    this.connection.socket.pause();
  }

  /** Once the answer is over, the connection may be paused for another exchange's reader. */
  resume(): void {
    if (!this.connection.closed && this.connection.exchange === this) this.connection.socket.resume();
  }

  cancel(): void {
    this.abandon(this.connection, this);
  }

  onHead(status: number, headers: Array<[string, string]>): void {
    this.#answer = new Http1Answer(status, headers, this);
    if (this.bufferUpTo === undefined) this.#settle();
  }

  onBody(piece: Buffer): void {
    this.#answer!.push(piece);
    // Too big to hold: handed over as it comes, for the caller's own limit to cut.
    if (!this.#settled && this.#answer!.queuedBytes > this.bufferUpTo!) this.#settle();
  }

  onEnd(): void {
    this.abort.listen(undefined);
    this.#answer!.end();
    if (!this.#settled) this.#settle();
  }

  onFail(error: Error): void {
    this.abort.listen(undefined);
    if (!this.#settled) {
      this.#settled = true;
      this.reject(error);
    } else this.#answer!.fail(error);
  }

  #settle(): void {
    this.#settled = true;
    this.resolve(this.#answer!.handOver());
  }
}

export function abortError(): Error {
  return new DOMException("The upstream request was aborted", "AbortError");
}
