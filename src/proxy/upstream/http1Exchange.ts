import type { BodyFraming, ChunkedDecoder } from "./http1Wire.ts";
import { type AnswerFlow, Http1Answer } from "./http1Answer.ts";
import type { CallAbort } from "./callAbort.ts";

/** The connection as its exchange sees it. */
export interface ExchangeConnection {
  readonly socket: { pause(): void; resume(): void };
  readonly closed: boolean;
  readonly exchange: Http1Exchange<ExchangeCall, unknown> | undefined;
}

/** The call an exchange answers, as the exchange reads it. */
export interface ExchangeCall {
  abort: CallAbort;
  /** A non-streamed answer is read whole before it is handed over, up to this many bytes. */
  bufferUpTo?: number;
}

/** What the client does for an exchange it owns. */
export interface ExchangeHooks<C extends ExchangeCall, O> {
  /** Gives it up: the connection is cut, the call or its answer fails. */
  abandon(connection: ExchangeConnection, exchange: Http1Exchange<C, O>, error?: Error): void;
  /** Makes the call again on a fresh connection: the call, and what was written for it. */
  retry(call: C, outgoing: O): Promise<Http1Answer>;
}

/**
 * One call's answer on its connection: the framing its head set, the answer handed to the caller
 * (at its head, or once it came whole when the caller buffers it), and the flow the answer's reader
 * drives. One object per call: it was a dozen closures and objects, made on every proxied request.
 */
export class Http1Exchange<C extends ExchangeCall, O> implements AnswerFlow {
  head?: { status: number; headers: Array<[string, string]>; framing: BodyFraming; http10: boolean };
  chunked?: ChunkedDecoder;
  /** Body bytes still to come under a Content-Length. */
  left = 0;
  #answer: Http1Answer | undefined;
  /**
   * The call and what was written for it, kept for a retry until the answer's first byte: after
   * it none can happen, and a streamed answer must not hold a large request body to its end.
   */
  #retryCall: C | undefined;
  #retryOutgoing: O | undefined;
  #settled = false;
  /** The call's abort listener: gives the exchange up. */
  readonly onAbort = () => this.hooks.abandon(this.connection, this, abortError());
  readonly #abort: CallAbort;
  readonly #bufferUpTo: number | undefined;

  constructor(
    private readonly connection: ExchangeConnection,
    call: C,
    outgoing: O,
    private readonly resolve: (answer: Http1Answer) => void,
    private readonly reject: (error: Error) => void,
    private readonly hooks: ExchangeHooks<C, O>,
  ) {
    this.#abort = call.abort;
    this.#bufferUpTo = call.bufferUpTo;
    this.#retryCall = call;
    this.#retryOutgoing = outgoing;
  }

  /** A byte of the answer came: the call can no longer be made again. */
  answerBegan(): void {
    this.#forgetCall();
  }

  pause(): void {
    this.connection.socket.pause();
  }

  /** Once the answer is over, the connection may be paused for another exchange's reader. */
  resume(): void {
    if (!this.connection.closed && this.connection.exchange === this) this.connection.socket.resume();
  }

  cancel(): void {
    this.hooks.abandon(this.connection, this);
  }

  onHead(status: number, headers: Array<[string, string]>): void {
    this.#answer = new Http1Answer(status, headers, this);
    if (this.#bufferUpTo === undefined) this.#settle();
  }

  onBody(piece: Buffer): void {
    this.#answer!.push(piece);
    // Too big to hold: handed over as it comes, for the caller's own limit to cut.
    if (!this.#settled && this.#answer!.queuedBytes > this.#bufferUpTo!) this.#settle();
  }

  onEnd(): void {
    this.#abort.listen(undefined);
    this.#answer!.end();
    if (!this.#settled) this.#settle();
  }

  /**
   * The connection failed. `stale`: it was a kept-alive one, which the server may have closed as it
   * was reused; failing before any byte of the answer came, the call is made once more on a fresh one.
   */
  onFail(error: Error, stale = false): void {
    this.#abort.listen(undefined);
    const call = this.#retryCall;
    const outgoing = this.#retryOutgoing as O;
    this.#forgetCall();
    if (this.#settled) {
      this.#answer!.fail(error);
      return;
    }
    this.#settled = true;
    if (stale && call) this.hooks.retry(call, outgoing).then(this.resolve, this.reject);
    else this.reject(error);
  }

  #forgetCall(): void {
    this.#retryCall = undefined;
    this.#retryOutgoing = undefined;
  }

  #settle(): void {
    this.#settled = true;
    this.resolve(this.#answer!.handOver());
  }
}

export function abortError(): Error {
  return new DOMException("The upstream request was aborted", "AbortError");
}
