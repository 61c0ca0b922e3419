/**
 * A minimal HTTP/1.1 client over Bun.connect, for bench/floor.ts's `client` rung: keep-alive
 * connections to one plain-HTTP origin, one POST at a time on each, the answer's head and then its
 * body (Content-Length or chunked) handed over as the bytes arrive. It shows what an upstream call
 * costs without Bun's fetch, whose body, once JS reads it, is the largest part of the floor. Not a
 * client for agentd: no TLS, proxies, 1xx answers, `Connection: close` or pipelining.
 */
import type { Socket } from "bun";

export interface AnswerReceiver {
  head(status: number, contentType: string): void;
  /** The body's bytes, chunked framing removed. */
  data(bytes: Uint8Array): void;
  end(): void;
  fail(error: Error): void;
}

const HEAD_END = Buffer.from("\r\n\r\n");

interface Connection {
  socket: Socket<Connection>;
  receiver: AnswerReceiver | undefined;
  buffered: Buffer | undefined;
  inHead: boolean;
  chunked: boolean;
  /** Bytes of a Content-Length body still to come. */
  remaining: number;
}

export class FloorHttp1Client {
  readonly #idle: Connection[] = [];

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  async post(path: string, headers: Record<string, string>, body: string, receiver: AnswerReceiver, signal: AbortSignal): Promise<void> {
    const connection = this.#idle.pop() ?? (await this.#connect());
    connection.receiver = receiver;
    connection.inHead = true;
    connection.buffered = undefined;
    // An abort closes the connection: the half-read answer cannot be reused.
    signal.addEventListener("abort", () => connection.receiver === receiver && this.#fail(connection, new Error("aborted")), {
      once: true,
    });
    let head = `POST ${path} HTTP/1.1\r\nhost: ${this.host}:${this.port}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
    connection.socket.write(`${head}\r\n${body}`);
  }

  async #connect(): Promise<Connection> {
    const connection = { receiver: undefined, buffered: undefined, inHead: true, chunked: false, remaining: 0 } as unknown as Connection;
    connection.socket = await Bun.connect<Connection>({
      hostname: this.host,
      port: this.port,
      data: connection,
      socket: {
        data: (socket, bytes) => {
          const state = socket.data;
          state.buffered = state.buffered?.length ? Buffer.concat([state.buffered, bytes]) : bytes;
          this.#read(state);
        },
        close: (socket) => {
          const state = socket.data;
          const at = this.#idle.indexOf(state);
          if (at >= 0) this.#idle.splice(at, 1);
          if (state.receiver) this.#fail(state, new Error("the upstream closed the connection"));
        },
        error: (socket, error) => socket.data.receiver && this.#fail(socket.data, error),
      },
    });
    return connection;
  }

  #read(c: Connection): void {
    const receiver = c.receiver;
    let buffer = c.buffered;
    if (!receiver || !buffer?.length) return;
    if (c.inHead) {
      const end = buffer.indexOf(HEAD_END);
      if (end < 0) return;
      const head = buffer.toString("latin1", 0, end).toLowerCase();
      c.inHead = false;
      c.chunked = /\r\ntransfer-encoding:[^\r]*chunked/.test(head);
      c.remaining = c.chunked ? 0 : Number(/\r\ncontent-length:\s*(\d+)/.exec(head)?.[1] ?? 0);
      buffer = buffer.subarray(end + 4);
      c.buffered = buffer;
      receiver.head(Number(head.slice(9, 12)), /\r\ncontent-type:\s*([^\r]*)/.exec(head)?.[1] ?? "application/octet-stream");
      if (!c.chunked && c.remaining === 0) {
        this.#done(c);
        return;
      }
    }
    if (!c.chunked) {
      const part = buffer.subarray(0, c.remaining);
      c.remaining -= part.length;
      c.buffered = buffer.subarray(part.length);
      if (part.length) receiver.data(part);
      if (c.remaining === 0) this.#done(c);
      return;
    }
    // Every whole chunk in the buffer goes out as one piece; a partial one waits for more bytes.
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = buffer.indexOf("\r\n", at);
      if (lineEnd < 0) break;
      const size = Number.parseInt(buffer.toString("latin1", at, lineEnd), 16);
      if (buffer.length < lineEnd + 2 + size + 2) break;
      if (size === 0) {
        c.buffered = buffer.subarray(lineEnd + 4);
        if (parts.length) receiver.data(Buffer.concat(parts));
        this.#done(c);
        return;
      }
      parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
    c.buffered = buffer.subarray(at);
    if (parts.length) receiver.data(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
  }

  #done(c: Connection): void {
    const receiver = c.receiver!;
    c.receiver = undefined;
    this.#idle.push(c);
    receiver.end();
  }

  #fail(c: Connection, error: Error): void {
    const receiver = c.receiver;
    c.receiver = undefined;
    c.socket.terminate();
    receiver?.fail(error);
  }
}
