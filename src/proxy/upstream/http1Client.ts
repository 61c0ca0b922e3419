import type { Socket } from "bun";
import {
  bodyFraming,
  ChunkedDecoder,
  Http1WireError,
  idleReuseMs,
  keepsAlive,
  parseResponseHead,
  partsOf,
  requestHead,
} from "./http1Wire.ts";
import type { Http1Answer } from "./http1Answer.ts";
import type { CallAbort } from "./callAbort.ts";
import { abortError, type ExchangeHooks, Http1Exchange } from "./http1Exchange.ts";

/**
 * agentd's own HTTP/1.1 client for http:// and https:// upstreams: keep-alive connections over
 * Bun.connect, answers handed over as Http1Answers (http1Answer.ts). Bun's fetch hands an answer's
 * body to JS through its own HTTP thread and a stream; this client reads the socket on the JS
 * thread, which bench/floor.ts measured at about a third less CPU per request. Over TLS it trusts
 * what fetch trusts (Bun's bundled roots, NODE_EXTRA_CA_CERTS, the system store when asked for) and
 * writes nothing until the certificate verified for the URL's host. Upstreams while a proxy is set in the environment, and
 * https:// ones while NODE_TLS_REJECT_UNAUTHORIZED=0 turns verification off, stay on fetch.
 */
export interface Http1Request {
  /** Read at its first request and kept (its request line, Host and origin): never changed after. */
  readonly url: URL;
  headers: Record<string, string>;
  body: string;
  abort: CallAbort;
  /** A non-streamed answer is read whole before it is handed over, up to this many bytes; past it, as a stream. */
  bufferUpTo?: number;
}

/** A request as written: its text and its length in bytes. */
interface Outgoing {
  text: string;
  bytes: number;
}

type Exchange = Http1Exchange<Http1Request, Outgoing>;

const MAX_HEAD_BYTES = 64 * 1024;
const MAX_IDLE_PER_ORIGIN = 64;
/** How long a connection this client ended waits for the server to close its side before it is cut. */
const CLOSE_WAIT_MS = 2_000;

interface Connection {
  socket: Socket<Connection>;
  origin: string;
  tls: boolean;
  /** TLS only: settles once the handshake is over, with why the connection is refused, if it is. */
  secured: PromiseWithResolvers<Error | undefined> | undefined;
  exchange: Exchange | undefined;
  pending: Buffer | undefined;
  unsent: Buffer | undefined;
  /** performance.now() until which this idle connection may be reused (idleReuseMs). */
  reusableUntil: number;
  reused: boolean;
  closed: boolean;
}

/** A connection failed before the answer began: the error carries a code like fetch's (ECONNRESET). */
function connectionError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

export interface Http1ClientOptions {
  /** Certificates to trust instead of the store fetch uses: for tests, which make their own CA. */
  ca?: string;
  /** CLOSE_WAIT_MS, shorter for tests. */
  closeWaitMs?: number;
}

export class Http1Client {
  readonly #idle = new Map<string, Connection[]>();
  readonly #ca: string | undefined;
  readonly #closeWaitMs: number;
  /** Handed to each exchange: one object for all of them. */
  readonly #hooks: ExchangeHooks<Http1Request, Outgoing> = {
    abandon: (connection, exchange, error) => this.#abandon(connection as Connection, exchange, error),
    retry: (call, outgoing) => this.#postFresh(call, outgoing),
  };

  constructor(options: Http1ClientOptions = {}) {
    this.#ca = options.ca;
    this.#closeWaitMs = options.closeWaitMs ?? CLOSE_WAIT_MS;
  }

  /**
   * Whether this client serves `url`: not while a proxy that fetch would use is set in the
   * environment (NO_PROXY is not consulted: such a URL stays on fetch, which does), nor for https://
   * while NODE_TLS_REJECT_UNAUTHORIZED=0 asks fetch to accept any certificate.
   */
  static serves(url: URL, env: Record<string, string | undefined> = process.env): boolean {
    if (env.HTTP_PROXY || env.http_proxy || env.ALL_PROXY || env.all_proxy) return false;
    if (url.protocol === "http:") return true;
    return url.protocol === "https:" && !env.HTTPS_PROXY && !env.https_proxy && env.NODE_TLS_REJECT_UNAUTHORIZED !== "0";
  }

  /**
   * POSTs `request.body`; resolves with the answer once its head is in (or, buffered, once its body
   * is). On a kept-alive connection this is the exchange's own promise, with no async step around it.
   */
  post(request: Http1Request): Promise<Http1Answer> {
    if (request.abort.aborted) return Promise.reject(abortError());
    let outgoing: Outgoing;
    try {
      const bodyBytes = Buffer.byteLength(request.body);
      const head = requestHead("POST", request.url, request.headers, bodyBytes);
      // Its length in bytes, known here: a large body is not measured twice.
      outgoing = { text: head + request.body, bytes: Buffer.byteLength(head) + bodyBytes };
    } catch (error) {
      // A header that cannot be sent: refused as every other failure of the call is, by the promise.
      return Promise.reject(error);
    }
    const connection = this.#take(partsOf(request.url).origin);
    return connection ? this.#exchange(connection, outgoing, request) : this.#postFresh(request, outgoing);
  }

  /**
   * The call on a new connection: when none was idle, or as the one retry of a call whose kept-alive
   * connection the server closed before answering. Whatever made that one stale (a restart, a dropped
   * NAT entry) likely made the other pooled ones stale too.
   */
  async #postFresh(request: Http1Request, outgoing: Outgoing): Promise<Http1Answer> {
    if (request.abort.aborted) throw abortError();
    return this.#exchange(await this.#connect(request.url, partsOf(request.url).origin, request.abort), outgoing, request);
  }

  #take(origin: string): Connection | undefined {
    const idle = this.#idle.get(origin);
    for (let connection = idle?.pop(); connection; connection = idle?.pop()) {
      if (!connection.closed && performance.now() < connection.reusableUntil) {
        connection.reused = true;
        connection.socket.ref();
        return connection;
      }
      this.#discard(connection);
    }
    return undefined;
  }

  /** A new connection; an abort (a connect deadline) gives up on it at once, as fetch does. */
  async #connect(url: URL, origin: string, abort: CallAbort): Promise<Connection> {
    const tls = url.protocol === "https:";
    const connection = {
      origin,
      tls,
      secured: tls ? Promise.withResolvers<Error | undefined>() : undefined,
      exchange: undefined,
      pending: undefined,
      unsent: undefined,
      reusableUntil: 0,
      reused: false,
      closed: false,
    };
    // An IPv6 literal comes bracketed in a URL; the socket and the certificate check want it bare.
    const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    const connecting = Bun.connect<Connection>({
      hostname,
      port: Number(url.port || (tls ? 443 : 80)),
      // Verification is Bun's default (the certificate chain, and the name against serverName);
      // handshake() refuses the connection when it reports any error.
      tls: tls ? { serverName: hostname, ...(this.#ca === undefined ? {} : { ca: this.#ca }) } : false,
      data: connection as Connection,
      socket: {
        handshake: (s, success, authorizationError) => this.#handshake(s, success, authorizationError),
        data: (s, data) => this.#receive(s.data, data),
        drain: (s) => this.#flush(s.data),
        end: (s) => this.#closed(s.data, true),
        close: (s, error) => this.#closed(s.data, false, error),
        error: (s, error) => this.#fail(s.data, error),
        connectError: () => {},
      },
    });
    const aborted = Promise.withResolvers<never>();
    abort.listen(() => aborted.reject(abortError()));
    try {
      (connection as Connection).socket = await Promise.race([connecting, aborted.promise]);
      // Bun.connect resolves once TCP is open: over TLS nothing is sent before the handshake verified.
      const refused = connection.secured && (await Promise.race([connection.secured.promise, aborted.promise]));
      if (refused) throw refused;
      return connection as Connection;
    } catch (error) {
      // A connection that opens after the caller gave up is closed, not left behind; one that
      // fails later has no one left to tell (the caller already has its abort).
      connecting.then(
        (socket) => socket.terminate(),
        () => {},
      );
      if (abort.aborted) throw error;
      const { message, code } = error as Error & { code?: string };
      throw connectionError(`cannot connect to ${origin}: ${message}`, code ?? "ECONNREFUSED");
    } finally {
      abort.listen(undefined);
    }
  }

  /** Fails closed: a certificate error refuses the connection even where Bun would let it through. */
  #handshake(socket: Socket<Connection>, success: boolean, authorizationError: Error | null): void {
    const connection = socket.data;
    if (success && !authorizationError) {
      connection.secured?.resolve(undefined);
      // Settled: a later close is the exchange's business, not the connect's.
      connection.secured = undefined;
      return;
    }
    const { message, code } = (authorizationError ?? new Error("the TLS handshake was not authorized")) as Error & { code?: string };
    // Before terminate(), whose close would settle it as a mere reset.
    connection.secured?.resolve(connectionError(`TLS: ${message}`, code ?? "ERR_TLS_HANDSHAKE"));
    connection.closed = true;
    socket.terminate();
  }

  #exchange(connection: Connection, outgoing: Outgoing, request: Http1Request): Promise<Http1Answer> {
    return new Promise<Http1Answer>((resolve, reject) => {
      const exchange = new Http1Exchange(connection, request, outgoing, resolve, reject, this.#hooks);
      request.abort.listen(exchange.onAbort);
      connection.exchange = exchange;
      connection.pending = undefined;
      // Given up on while the connection opened: nothing is sent.
      if (request.abort.aborted) this.#abandon(connection, exchange, abortError());
      else this.#send(connection, outgoing.text, outgoing.bytes);
    });
  }

  /** Writes the request (`length` bytes); what the socket did not take goes out on `drain`. */
  #send(connection: Connection, data: string | Buffer, length: number): void {
    const written = connection.socket.write(data);
    if (written < length) connection.unsent = (typeof data === "string" ? Buffer.from(data) : data).subarray(Math.max(0, written));
  }

  #flush(connection: Connection): void {
    const unsent = connection.unsent;
    if (!unsent) return;
    connection.unsent = undefined;
    this.#send(connection, unsent, unsent.length);
  }

  #receive(connection: Connection, data: Buffer): void {
    const exchange = connection.exchange;
    if (!exchange) {
      // Bytes nobody asked for: the connection's framing is lost.
      connection.socket.terminate();
      return;
    }
    exchange.answerBegan();
    try {
      let bytes: Buffer | undefined = connection.pending ? Buffer.concat([connection.pending, data]) : data;
      connection.pending = undefined;
      while (bytes && connection.exchange === exchange) bytes = this.#advance(connection, exchange, bytes);
    } catch (error) {
      this.#fail(connection, error as Error);
    }
  }

  /** Feeds bytes to the exchange; returns what is left to feed (undefined once all are used or held). */
  #advance(connection: Connection, exchange: Exchange, bytes: Buffer): Buffer | undefined {
    if (!exchange.head) {
      const head = parseResponseHead(bytes, MAX_HEAD_BYTES);
      if (!head) {
        connection.pending = Buffer.from(bytes);
        return undefined;
      }
      const rest = bytes.subarray(head.length);
      // An interim answer (100 Continue, 103 Early Hints) precedes the real one.
      if (head.status >= 100 && head.status < 200) return rest.length > 0 ? rest : undefined;
      const framing = bodyFraming(head.status, head.headers);
      exchange.head = { status: head.status, headers: head.headers, framing, http10: head.http10 };
      if (framing.kind === "length") exchange.left = framing.bytes;
      if (framing.kind === "chunked") exchange.chunked = new ChunkedDecoder();
      exchange.onHead(head.status, head.headers);
      if (framing.kind === "none" || (framing.kind === "length" && framing.bytes === 0)) {
        this.#finish(connection, exchange, rest);
        return undefined;
      }
      return rest.length > 0 ? rest : undefined;
    }
    const framing = exchange.head.framing;
    if (framing.kind === "close") {
      exchange.onBody(bytes);
      return undefined;
    }
    if (framing.kind === "length") {
      const piece = bytes.subarray(0, exchange.left);
      exchange.left -= piece.length;
      if (piece.length > 0) exchange.onBody(piece);
      if (exchange.left === 0) this.#finish(connection, exchange, bytes.subarray(piece.length));
      return undefined;
    }
    const { body, rest } = exchange.chunked!.push(bytes);
    if (body.length > 0) exchange.onBody(body.length === 1 ? body[0]! : Buffer.concat(body));
    if (exchange.chunked!.done) this.#finish(connection, exchange, rest);
    return undefined;
  }

  #finish(connection: Connection, exchange: Exchange, extra: Buffer | undefined): void {
    connection.exchange = undefined;
    try {
      exchange.onEnd();
    } catch (error) {
      // Handing the answer over failed: the call fails, the connection is not trusted again.
      connection.closed = true;
      connection.socket.terminate();
      exchange.onFail(error as Error);
      return;
    }
    // An answer that came before its request was all written: the rest of that request would precede the next one.
    const reuseMs = idleReuseMs(exchange.head!.headers, connection.tls);
    if (
      extra?.length ||
      connection.unsent ||
      reuseMs === 0 ||
      !keepsAlive(exchange.head!.headers, exchange.head!.framing, exchange.head!.http10)
    )
      this.#discard(connection);
    else this.#park(connection, reuseMs);
  }

  #park(connection: Connection, reuseMs: number): void {
    // The answer may have ended as its slow reader paused the socket: the next one must be read.
    connection.socket.resume();
    // Waiting in the pool keeps no process alive: a worker that stops exits (fetch's pool does not hold one either).
    connection.socket.unref();
    connection.reusableUntil = performance.now() + reuseMs;
    let idle = this.#idle.get(connection.origin);
    if (!idle) {
      idle = [];
      this.#idle.set(connection.origin, idle);
    }
    if (idle.length < MAX_IDLE_PER_ORIGIN) idle.push(connection);
    else this.#discard(connection);
  }

  /**
   * Closes a connection that is not to be reused, politely (close_notify, FIN), and cuts it if the
   * server has not closed its side a while later: a server that never does would hold this socket
   * open, one more per answer. shutdown(), not end(): over TLS end() detaches the socket, which
   * terminate() then no longer reaches.
   */
  #discard(connection: Connection): void {
    connection.closed = true;
    const socket = connection.socket;
    socket.shutdown();
    // Neither it nor its timer keeps a worker that stops alive; once the server closed, terminate() does nothing.
    socket.unref();
    setTimeout(() => socket.terminate(), this.#closeWaitMs).unref();
  }

  /**
   * The peer closed (`ended`: it sent FIN, or close_notify over TLS): a close-delimited body ends,
   * unless the connection was reset (`error`), which cut it short; any other exchange fails.
   */
  #closed(connection: Connection, ended: boolean, error?: Error): void {
    const exchange = connection.exchange;
    if (exchange?.head?.framing.kind === "close" && !error) {
      connection.exchange = undefined;
      exchange.onEnd();
    }
    this.#fail(connection, error);
    if (ended) connection.socket.end();
  }

  #fail(connection: Connection, error: Error | undefined): void {
    const exchange = connection.exchange;
    connection.exchange = undefined;
    connection.closed = true;
    const idle = this.#idle.get(connection.origin);
    const at = idle?.indexOf(connection) ?? -1;
    if (at >= 0) idle!.splice(at, 1);
    // Closed during the TLS handshake: the connect waiting on it fails.
    connection.secured?.resolve(
      connectionError(`the connection closed during the TLS handshake${error ? `: ${error.message}` : ""}`, "ECONNRESET"),
    );
    if (!exchange) return;
    connection.socket.terminate();
    const failure =
      error instanceof Http1WireError
        ? error
        : connectionError(error?.message ?? "the connection closed before the answer was complete", "ECONNRESET");
    // A kept-alive connection the server closed before answering: the call goes once more, on a fresh one.
    exchange.onFail(failure, connection.reused);
  }

  /** Stops an exchange its caller gave up on: the connection cannot be reused mid-answer. */
  #abandon(connection: Connection, exchange: Exchange, error: Error = abortError()): void {
    if (connection.exchange !== exchange) return;
    connection.exchange = undefined;
    connection.closed = true;
    connection.socket.terminate();
    exchange.onFail(error);
  }
}
