import { type AnswerHeaders, type BodyRead, type BodyReader, bodyText, type UpstreamAnswer } from "./upstreamAnswer.ts";

/** A head's headers (names already lower case) read in place: no Headers object is built per answer. */
export class HeaderList implements AnswerHeaders {
  constructor(private readonly pairs: ReadonlyArray<readonly [string, string]>) {}

  get(name: string): string | null {
    const wanted = name.toLowerCase();
    let found: string | null = null;
    for (const [key, value] of this.pairs) if (key === wanted) found = found === null ? value : `${found}, ${value}`;
    return found;
  }

  forEach(fn: (value: string, name: string) => void): void {
    // Nearly every answer names each header once: then the pairs go out as they are, with nothing built.
    if (!this.#repeats()) {
      for (const [name, value] of this.pairs) fn(value, name);
      return;
    }
    const joined = new Map<string, string>();
    for (const [name, value] of this.pairs) {
      const before = joined.get(name);
      joined.set(name, before === undefined ? value : `${before}, ${value}`);
    }
    joined.forEach(fn);
  }

  /** Whether a name comes twice; a long head is taken to (the pairwise check is for the usual few). */
  #repeats(): boolean {
    const pairs = this.pairs;
    if (pairs.length > 24) return true;
    for (let i = 1; i < pairs.length; i++) for (let j = 0; j < i; j++) if (pairs[i]![0] === pairs[j]![0]) return true;
    return false;
  }
}

/** What the connection does for the answer's reader: hold the socket while pieces wait, read on, or give up. */
export interface AnswerFlow {
  pause(): void;
  resume(): void;
  cancel(): void;
}

/** Body bytes waiting for a slow reader before the socket stops being read. */
const PAUSE_AT_BYTES = 1 << 20;
const DONE: BodyRead = { done: true };

/**
 * An answer of agentd's own HTTP/1.1 client: its status, its head's headers, and its body as the
 * connection delivers it (push, end, fail), read through reader() (or text(), or a stream made on
 * first use of `body`). One reader takes the body.
 */
export class Http1Answer implements UpstreamAnswer {
  readonly ok: boolean;
  readonly headers: HeaderList;
  #pieces: Uint8Array[] = [];
  #queuedBytes = 0;
  #ended = false;
  #error: Error | undefined;
  #waiter: PromiseWithResolvers<BodyRead> | undefined;
  /** While false the pieces are the client's to hold (a non-streamed answer read whole): the socket is never paused. */
  #handedOver = false;
  #stream: ReadableStream<Uint8Array> | undefined;
  /** Who took the body (reader(), text() or body): a second taker is refused, as a used Response's body is. */
  #takenBy: string | undefined;

  constructor(
    readonly status: number,
    headers: ReadonlyArray<readonly [string, string]>,
    private readonly flow: AnswerFlow,
  ) {
    this.ok = status >= 200 && status < 300;
    this.headers = new HeaderList(headers);
  }

  /** Body bytes received so far and not yet read. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** The caller has the answer: from now on a reader that falls behind pauses the socket. */
  handOver(): this {
    this.#handedOver = true;
    if (this.#queuedBytes > PAUSE_AT_BYTES) this.flow.pause();
    return this;
  }

  push(piece: Uint8Array): void {
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter.resolve({ done: false, value: piece });
      return;
    }
    this.#pieces.push(piece);
    this.#queuedBytes += piece.length;
    if (this.#handedOver && this.#queuedBytes > PAUSE_AT_BYTES) this.flow.pause();
  }

  end(): void {
    this.#ended = true;
    this.#waiter?.resolve(DONE);
    this.#waiter = undefined;
  }

  fail(error: Error): void {
    if (this.#ended) return;
    this.#error = error;
    this.#waiter?.reject(error);
    this.#waiter = undefined;
  }

  reader(): BodyReader {
    this.#take("reader()");
    const answer = this;
    return {
      read: () => this.#read(),
      cancel: () => this.flow.cancel(),
      get drained() {
        return answer.#ended && answer.#pieces.length === 0;
      },
    };
  }

  takeWholeText(limit: number): string | undefined {
    if (!this.#ended || this.#error !== undefined || this.#takenBy !== undefined || this.#queuedBytes > limit) return undefined;
    this.#take("text()");
    return this.#whole();
  }

  async text(): Promise<string> {
    this.#take("text()");
    // The whole body came before text() was asked (every buffered answer): one decode, with no reads and no decoder of its own.
    if (this.#ended && this.#error === undefined) return this.#whole();
    const decoder = new TextDecoder();
    let text = "";
    for (let read = await this.#read(); !read.done; read = await this.#read()) text += decoder.decode(read.value, { stream: true });
    return text + decoder.decode();
  }

  get body(): ReadableStream<Uint8Array> {
    if (this.#stream) return this.#stream;
    this.#take("body");
    this.#stream = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const read = await this.#read();
        if (read.done) controller.close();
        else controller.enqueue(read.value);
      },
      cancel: () => this.flow.cancel(),
    });
    return this.#stream;
  }

  #whole(): string {
    const pieces = this.#pieces;
    this.#pieces = [];
    this.#queuedBytes = 0;
    return bodyText(pieces);
  }

  #take(by: string): void {
    if (this.#takenBy !== undefined) throw new TypeError(`Cannot read the answer's body with ${by}: ${this.#takenBy} already took it`);
    this.#takenBy = by;
  }

  /** The pieces received since the last read, as one; waits for the next when none are. */
  #read(): Promise<BodyRead> {
    if (this.#pieces.length > 0) {
      const pieces = this.#pieces;
      const value = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
      this.#pieces = [];
      this.#queuedBytes = 0;
      this.flow.resume();
      return Promise.resolve({ done: false, value });
    }
    if (this.#error) return Promise.reject(this.#error);
    if (this.#ended) return Promise.resolve(DONE);
    if (this.#waiter) return Promise.reject(new TypeError("Cannot read the answer's body: a read is already waiting"));
    this.#waiter = Promise.withResolvers<BodyRead>();
    return this.#waiter.promise;
  }
}
