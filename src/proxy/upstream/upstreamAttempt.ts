import { type ClientSide, ClientGoneError } from "./clientGone.ts";
import { parseRetryAfter } from "./retryPolicy.ts";
import { SseDecoder, SseOverflowError, type EventSourceMessage } from "./sseDecoder.ts";
import { causeForStatus, UpstreamFailure, type FailureCause } from "./upstreamFailure.ts";
import { readBounded } from "./boundedBody.ts";
import { CallAbort } from "./callAbort.ts";
import { Http1Client } from "./http1Client.ts";
import { type BodyReader, readerOf, type UpstreamAnswer } from "./upstreamAnswer.ts";

export interface AttemptTimeouts {
  connect_ms: number;
  first_byte_ms: number;
  idle_ms: number;
  total_ms: number;
}

/** One pool of connections for every attempt. */
const http1Client = new Http1Client();
/**
 * How long into a call it starts following its client. Asking a Bun request for its signal makes
 * one, and listening on it cost an instant call 3-5 % more CPU (bench/compare.ts, c=32): a
 * call that ends sooner never asks. A client that left before is seen then all the same.
 */
const WATCH_CLIENT_AFTER_MS = 25;
/** Each upstream URL's verdict, parsed once: a URL for the own client, or null for fetch. */
const ownClientUrls = new Map<string, URL | null>();

function ownClientUrl(url: string): URL | undefined {
  let verdict = ownClientUrls.get(url);
  if (verdict === undefined) {
    const parsed = URL.parse(url);
    verdict = parsed && Http1Client.serves(parsed) ? parsed : null;
    // Bounded: upstream URLs come from the config, plus passthrough paths.
    if (ownClientUrls.size > 1000) ownClientUrls.clear();
    ownClientUrls.set(url, verdict);
  }
  return verdict ?? undefined;
}

const MAX_ERROR_BODY = 64 * 1024;
const MAX_JSON_BODY = 32 * 1024 * 1024;
const DRAIN_MS = 5_000;

/**
 * One HTTP exchange with one upstream, with its deadlines:
 * - connect: until response headers of a streamed request (a live server sends them at once;
 *   a non-streamed answer only has headers when it is done, so there the first-byte deadline rules);
 * - first byte: until the first SSE event, or the whole JSON body;
 * - idle: between SSE events, re-armed on each;
 * - total: the whole exchange.
 * Each deadline aborts the fetch and the failure carries which one fired.
 */
export class UpstreamAttempt {
  readonly #abort = new CallAbort();
  /** A stream's: until the call follows its client (it starts after WATCH_CLIENT_AFTER_MS). A non-streamed call's phase timer does both. */
  #watchTimer: ReturnType<typeof setTimeout> | undefined;
  /** The client's signal, once the call follows it. */
  #clientSignal: AbortSignal | undefined;
  #timedOut: FailureCause | undefined;
  #phaseTimer: ReturnType<typeof setTimeout> | undefined;
  /** A stream's whole-exchange deadline; a non-streamed exchange has one deadline in #phaseTimer. */
  #totalTimer: ReturnType<typeof setTimeout> | undefined;
  #reader: BodyReader | undefined;
  /** Made at the first streamed read: a non-streamed answer never needs one. */
  #decoder: SseDecoder | undefined;
  #queue: EventSourceMessage[] = [];
  #queueIndex = 0;
  #sawEvent = false;
  #ended = false;
  readonly #onClientAbort = () => this.#abort.abort();

  constructor(
    private readonly client: ClientSide,
    private readonly timeouts: AttemptTimeouts,
    /** Upstreams through agentd's own HTTP/1.1 client (http1Client.ts) rather than fetch. */
    private readonly ownClient = true,
  ) {}

  /** From now on a client that goes away aborts the call (one that already went aborts it now). */
  static #watchClient(attempt: UpstreamAttempt): void {
    attempt.#watchTimer = undefined;
    const signal = attempt.client.signal;
    if (signal.aborted) {
      attempt.#abort.abort();
      return;
    }
    // Not `once`: finish() removes it, and a listener without options costs half as much to add.
    signal.addEventListener("abort", attempt.#onClientAbort);
    attempt.#clientSignal = signal;
  }

  /**
   * A non-streamed call's one timer: its deadline when that has come, else the client watch and then
   * what is left of the deadline, counted from `deadlineAt` (a timer that ran late must not push it back).
   */
  static #watchThenExpire(attempt: UpstreamAttempt, cause: FailureCause, deadlineAt: number): void {
    const left = deadlineAt - performance.now();
    if (left <= 0) {
      attempt.#expire(cause);
      return;
    }
    UpstreamAttempt.#watchClient(attempt);
    if (!attempt.#abort.aborted) attempt.#arm(cause, left);
  }

  /**
   * Sends the request under its first deadlines; resolves with the answer as it came (any status),
   * and then answered() takes over, or rejects, then sendFailed() says why. Split in two so the
   * dispatcher awaits the client's own promise, with no async step of the attempt's around it.
   */
  send(url: string, headers: Record<string, string>, body: string, stream: boolean): Promise<UpstreamAnswer> {
    const { connect_ms, first_byte_ms, total_ms } = this.timeouts;
    if (!stream) {
      // A non-streamed answer's first byte comes with its whole body, so its two deadlines run
      // together, and the call starts following its client on the way: one timer for all three (a
      // call that ended within WATCH_CLIENT_AFTER_MS set and cleared two, one of them the watch).
      const [cause, ms]: [FailureCause, number] =
        first_byte_ms < total_ms ? ["first_byte_timeout", first_byte_ms] : ["total_timeout", total_ms];
      const deadlineAt = performance.now() + ms;
      this.#phaseTimer = setTimeout(UpstreamAttempt.#watchThenExpire, Math.min(ms, WATCH_CLIENT_AFTER_MS), this, cause, deadlineAt);
    } else {
      this.#watchTimer = setTimeout(UpstreamAttempt.#watchClient, WATCH_CLIENT_AFTER_MS, this);
      this.#totalTimer = setTimeout(() => this.#expire("total_timeout"), total_ms);
      if (connect_ms < first_byte_ms) this.#arm("connect_timeout", connect_ms);
      else this.#arm("first_byte_timeout", first_byte_ms);
    }
    // Bun's own socket idle timer would cut long silent streams at 5 min; our deadlines rule instead.
    const own = this.ownClient ? ownClientUrl(url) : undefined;
    return own
      ? http1Client.post({ url: own, headers, body, abort: this.#abort, bufferUpTo: stream ? undefined : MAX_JSON_BODY })
      : fetch(url, {
          method: "POST",
          headers,
          body,
          signal: this.#abort.signal(),
          redirect: "manual",
          timeout: false,
        } as RequestInit);
  }

  /** Why send() failed: a deadline, the client gone, or the connection (an UpstreamFailure or a ClientGoneError). */
  sendFailed(error: unknown): Error {
    return this.#failure(error, "connect");
  }

  /**
   * The answer's head is in: a stream's first-byte deadline starts. A 2xx answer gives undefined;
   * any other gives its failure, once its body was read (under that deadline).
   */
  answered(response: UpstreamAnswer, stream: boolean): Promise<UpstreamFailure | Error> | undefined {
    if (stream) this.#arm("first_byte_timeout", this.timeouts.first_byte_ms);
    return response.ok ? undefined : this.#httpFailure(response);
  }

  /**
   * A non-streamed body (bounded) under the first-byte deadline. A body that came whole with its
   * answer (agentd's own client reads one whole before handing it over) is taken at once: no read
   * and no promise.
   */
  readBody(response: UpstreamAnswer): string | Promise<string> {
    const whole = response.takeWholeText?.(MAX_JSON_BODY);
    if (whole === undefined) return this.#readBody(response);
    this.finish();
    return whole;
  }

  async #readBody(response: UpstreamAnswer): Promise<string> {
    try {
      const length = Number(response.headers.get("content-length") ?? "0");
      if (length > MAX_JSON_BODY)
        throw new UpstreamFailure("malformed", `upstream body of ${length} bytes exceeds the limit`, { status: response.status });
      const read = await readBounded(response, MAX_JSON_BODY);
      if (read.truncated)
        throw new UpstreamFailure("malformed", `upstream body exceeds the limit of ${MAX_JSON_BODY} bytes`, { status: response.status });
      this.finish();
      return read.text;
    } catch (error) {
      if (error instanceof UpstreamFailure) throw error;
      throw this.#failure(error, "body");
    }
  }

  /**
   * Next SSE event, or undefined at the end of the stream. The idle deadline is armed at the first
   * event and re-armed by each read that brings events.
   */
  async nextEvent(response: UpstreamAnswer): Promise<EventSourceMessage | undefined> {
    for (;;) {
      const event = this.takeBufferedEvent();
      if (event) {
        if (!this.#sawEvent) {
          this.#sawEvent = true;
          this.#arm("idle_timeout", this.timeouts.idle_ms);
        }
        return event;
      }
      if (this.#ended) return undefined;
      this.#reader ??= readerOf(response)!;
      let chunk: { done: boolean; value?: Uint8Array };
      try {
        chunk = await this.#reader.read();
      } catch (error) {
        throw this.#failure(error, "body");
      }
      try {
        this.#decoder ??= new SseDecoder();
        if (chunk.done) {
          this.#ended = true;
          this.#queue = this.#decoder.end();
        } else {
          this.#queue = this.#decoder.push(chunk.value!);
        }
      } catch (error) {
        if (error instanceof SseOverflowError) throw new UpstreamFailure("malformed", error.message, { status: response.status });
        throw error;
      }
      this.#queueIndex = 0;
      // Every event of one read is as fresh as the read: one re-arm for all of them.
      if (this.#sawEvent && this.#queue.length > 0) this.#phaseTimer?.refresh();
    }
  }

  /** Whether an event of the last read is still waiting: nextEvent() would answer without reading. */
  hasBufferedEvent(): boolean {
    return this.#queueIndex < this.#queue.length;
  }

  /**
   * The next event of the last read, when one waits (else undefined): no promise and no timer work,
   * for a relay draining a read of many events. The first event comes through nextEvent().
   */
  takeBufferedEvent(): EventSourceMessage | undefined {
    return this.#queueIndex < this.#queue.length ? this.#queue[this.#queueIndex++] : undefined;
  }

  /** Stops the deadlines and stops following the client; the request itself goes on (abort() ends it). */
  finish(): void {
    clearTimeout(this.#phaseTimer);
    clearTimeout(this.#totalTimer);
    clearTimeout(this.#watchTimer);
    this.#clientSignal?.removeEventListener("abort", this.#onClientAbort);
  }

  /**
   * Reads what is left after the end marker so the connection can be reused, within a short
   * deadline (an upstream that keeps the stream open after [DONE] gets cut instead).
   */
  drain(response: UpstreamAnswer): void {
    this.#reader ??= readerOf(response)!;
    const reader = this.#reader;
    // Most often the end came in the same read as the end marker: nothing is left to wait for.
    if (reader.drained) {
      this.finish();
      return;
    }
    this.#arm("idle_timeout", DRAIN_MS);
    const loop = async () => {
      while (!(await reader.read()).done);
    };
    loop()
      .catch(() => {})
      .finally(() => this.finish());
  }

  /** Ends the upstream request too: the client left, or we gave up on this attempt. */
  abort(): void {
    this.finish();
    this.#abort.abort();
  }

  #arm(cause: FailureCause, ms: number): void {
    clearTimeout(this.#phaseTimer);
    this.#phaseTimer = setTimeout(() => this.#expire(cause), ms);
  }

  #expire(cause: FailureCause): void {
    this.#timedOut ??= cause;
    this.#abort.abort();
  }

  #failure(error: unknown, phase: "connect" | "body"): Error {
    this.finish();
    if (this.client.signal.aborted) return new ClientGoneError();
    if (this.#timedOut) return new UpstreamFailure(this.#timedOut, `upstream ${this.#timedOut.replaceAll("_", " ")}`);
    const code = (error as { code?: string }).code;
    const message = (error as Error).message ?? String(error);
    if (phase === "connect" && code !== "ECONNRESET") return new UpstreamFailure("connect", `cannot connect to the upstream: ${message}`);
    return new UpstreamFailure("reset", `the upstream connection broke: ${message}`);
  }

  async #httpFailure(response: UpstreamAnswer): Promise<UpstreamFailure | Error> {
    let body = "";
    try {
      body = (await readBounded(response, MAX_ERROR_BODY)).text;
    } catch (error) {
      return this.#failure(error, "body");
    }
    this.finish();
    const cause = causeForStatus(response.status);
    // Not followed: the request and its API key would go wherever the answer points.
    const said =
      cause === "redirect"
        ? `a redirect to ${response.headers.get("location") ?? "(no location)"}, which agentd does not follow: set the provider's base_url to where it points`
        : upstreamErrorMessage(body);
    return new UpstreamFailure(cause, `upstream answered ${response.status}: ${said}`, {
      status: response.status,
      retryAfterMs: parseRetryAfter(response.headers),
      body,
    });
  }
}

/** The message inside an OpenAI-shaped error body, or the body's start. */
export function upstreamErrorMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === "string") return parsed.error;
    if (parsed.error && typeof parsed.error.message === "string") return parsed.error.message;
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // Not JSON: show the text itself.
  }
  return body.slice(0, 300) || "(empty body)";
}
