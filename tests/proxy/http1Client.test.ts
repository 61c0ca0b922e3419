import { afterEach, describe, expect, test } from "bun:test";
import { callAbortOn } from "../support/callAbort.ts";
import type { Socket, TCPSocketListener } from "bun";
import { CallAbort } from "../../src/proxy/upstream/callAbort.ts";
import { Http1Client } from "../../src/proxy/upstream/http1Client.ts";
import { Http1HeaderError, Http1WireError } from "../../src/proxy/upstream/http1Wire.ts";

interface Peer {
  /** Bytes of the request being received. */
  received: Buffer;
  requests: number;
}

/** A raw TCP upstream: `answer` runs once per whole request (head plus Content-Length body) on its connection. */
function rawUpstream(answer: (socket: Socket<Peer>, request: string, peer: Peer) => void) {
  const stats = { connections: 0, requests: [] as string[], closed: 0 };
  const listener: TCPSocketListener<Peer> = Bun.listen<Peer>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        stats.connections++;
        socket.data = { received: Buffer.alloc(0), requests: 0 };
      },
      data(socket, data) {
        const peer = socket.data;
        peer.received = Buffer.concat([peer.received, data]);
        const headEnd = peer.received.indexOf("\r\n\r\n");
        if (headEnd < 0) return;
        const head = peer.received.toString("latin1", 0, headEnd);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (peer.received.length < headEnd + 4 + length) return;
        const request = peer.received.toString("utf8", 0, headEnd + 4 + length);
        peer.received = peer.received.subarray(headEnd + 4 + length);
        peer.requests++;
        stats.requests.push(request);
        answer(socket, request, peer);
      },
      close() {
        stats.closed++;
      },
    },
  });
  servers.push(listener);
  return { url: (path = "/v1/chat/completions") => new URL(`http://127.0.0.1:${listener.port}${path}`), stats };
}

const servers: TCPSocketListener<Peer>[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.stop(true);
});

const json = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
const post = (
  client: Http1Client,
  url: URL,
  options: { body?: string; signal?: AbortSignal; bufferUpTo?: number; headers?: Record<string, string> } = {},
) =>
  client.post({
    url,
    headers: options.headers ?? { "content-type": "application/json" },
    body: options.body ?? '{"model":"m"}',
    abort: callAbortOn(options.signal ?? new AbortController().signal),
    ...(options.bufferUpTo === undefined ? {} : { bufferUpTo: options.bufferUpTo }),
  });

async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await Bun.sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("agentd's HTTP/1.1 client", () => {
  test("no upstream while a proxy is set in the environment (https: tests/proxy/http1Tls.test.ts)", () => {
    expect(Http1Client.serves(new URL("http://127.0.0.1:8000/v1"), {})).toBe(true);
    expect(Http1Client.serves(new URL("ftp://127.0.0.1/v1"), {})).toBe(false);
    expect(Http1Client.serves(new URL("http://10.0.0.2/v1"), { HTTPS_PROXY: "x", http_proxy: "http://proxy:3128" })).toBe(false);
    expect(Http1Client.serves(new URL("http://10.0.0.2/v1"), { ALL_PROXY: "socks5://p" })).toBe(false);
  });

  test("a JSON answer is read whole, with its status and headers, and the connection carries the next request", async () => {
    const upstream = rawUpstream((socket, request) =>
      socket.write(json(`{"echo":${JSON.stringify(request.split("\r\n\r\n")[1])}}`, "x-request-id: r1\r\n")),
    );
    const client = new Http1Client();
    for (const body of ['{"n":1}', '{"n":2,"text":"ünïcödé"}']) {
      const response = await post(client, upstream.url(), { body, bufferUpTo: 1 << 20 });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-request-id")).toBe("r1");
      expect(JSON.parse(await response.text())).toEqual({ echo: body });
    }
    expect(upstream.stats.connections).toBe(1);
    expect(upstream.stats.requests[0]).toStartWith("POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:");
  });

  test("a server's Keep-Alive timeout rules reuse: one that expires within a second is not reused at all", async () => {
    const upstream = rawUpstream((socket) => socket.write(json("{}", "keep-alive: timeout=1\r\n")));
    const client = new Http1Client();
    for (let i = 0; i < 2; i++) expect((await post(client, upstream.url(), { bufferUpTo: 1 << 20 })).status).toBe(200);
    expect(upstream.stats.connections).toBe(2);
    const lasting = rawUpstream((socket) => socket.write(json("{}", "keep-alive: timeout=2\r\n")));
    for (let i = 0; i < 2; i++) expect((await post(client, lasting.url(), { bufferUpTo: 1 << 20 })).status).toBe(200);
    expect(lasting.stats.connections).toBe(1);
  });

  test("an HTTP/1.0 answer's connection is reused only when it says keep-alive", async () => {
    const client = new Http1Client();
    for (const [extra, connections] of [
      ["", 2],
      ["connection: keep-alive\r\n", 1],
    ] as const) {
      const upstream = rawUpstream((socket) => socket.write(`HTTP/1.0 200 OK\r\ncontent-length: 2\r\n${extra}\r\nok`));
      for (let i = 0; i < 2; i++) expect(await (await post(client, upstream.url(), { bufferUpTo: 1 << 20 })).text()).toBe("ok");
      expect(upstream.stats.connections).toBe(connections);
    }
  });

  test("a chunked stream reaches the reader as it arrives, chunk by chunk, whatever the chunks' sizes", async () => {
    let socketOf: Socket<Peer> | undefined;
    const upstream = rawUpstream((socket) => {
      socketOf = socket;
      socket.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n6\r\ndata: \r\n");
    });
    const response = await post(new Http1Client(), upstream.url());
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value!).toString()).toBe("data: ");
    // The rest arrives later, split inside a size line and inside data.
    socketOf!.write("1");
    socketOf!.write("0\r\n0123456789abc");
    socketOf!.write("def\r\n0\r\n\r\n");
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += Buffer.from(chunk.value!).toString();
    expect(rest).toBe("0123456789abcdef");
  });

  test("a kept-alive connection the upstream closed while idle is replaced, and the request still goes through", async () => {
    const upstream = rawUpstream((socket, _request, peer) => {
      // Answers once per connection, then closes it without saying so (as an idle timeout does).
      socket.write(json(`{"connection_request":${peer.requests}}`));
      setTimeout(() => socket.end(), 20);
    });
    const client = new Http1Client();
    expect(JSON.parse(await (await post(client, upstream.url(), { bufferUpTo: 1024 })).text())).toEqual({ connection_request: 1 });
    await waitFor(() => upstream.stats.closed === 1, "the upstream to close the idle connection");
    expect(JSON.parse(await (await post(client, upstream.url(), { bufferUpTo: 1024 })).text())).toEqual({ connection_request: 1 });
    expect(upstream.stats.connections).toBe(2);
  });

  test("a request that meets a kept-alive connection as the upstream drops it is sent once more on a fresh one", async () => {
    const upstream = rawUpstream((socket, _request, peer) => {
      // The second request on a connection meets it closing (the race of an idle timeout): no answer.
      if (peer.requests === 2) socket.end();
      else socket.write(json(`{"connection_request":${peer.requests}}`));
    });
    const client = new Http1Client();
    expect(JSON.parse(await (await post(client, upstream.url(), { bufferUpTo: 1024 })).text())).toEqual({ connection_request: 1 });
    expect(JSON.parse(await (await post(client, upstream.url(), { bufferUpTo: 1024 })).text())).toEqual({ connection_request: 1 });
    expect(upstream.stats.requests.length).toBe(3);
    expect(upstream.stats.connections).toBe(2);
  });

  test("a body that ends when the connection closes, and interim 1xx answers, are read as such", async () => {
    const upstream = rawUpstream((socket) => {
      socket.write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the end");
      socket.end();
    });
    const response = await post(new Http1Client(), upstream.url(), { bufferUpTo: 1024 });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("until the end");
  });

  test("an answer past the buffering limit comes as a stream, all of it, for the caller's own limit to cut", async () => {
    const body = "x".repeat(200_000);
    const upstream = rawUpstream((socket) => socket.write(json(body)));
    const response = await post(new Http1Client(), upstream.url(), { bufferUpTo: 1000 });
    expect(response.headers.get("content-length")).toBe("200000");
    expect(await response.text()).toBe(body);
  });

  test("a large request body reaches the upstream whole, past what one socket write takes", async () => {
    const body = JSON.stringify({ model: "m", text: "é".repeat(3_000_000) });
    const upstream = rawUpstream((socket, request) => socket.write(json(String(Buffer.byteLength(request.split("\r\n\r\n")[1]!)))));
    const response = await post(new Http1Client(), upstream.url(), { body, bufferUpTo: 1024 });
    expect(await response.text()).toBe(String(Buffer.byteLength(body)));
  });

  test("streamed answers do not hold their requests once they began: large bodies are let go", async () => {
    // An upstream that keeps nothing of what it reads, and leaves each stream open after its first chunk.
    const upstream = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      maxRequestBodySize: 1 << 30,
      async fetch(request) {
        await request.arrayBuffer();
        return new Response(new ReadableStream({ start: (controller) => controller.enqueue(Buffer.from("first")) }), {
          headers: { "content-type": "text/event-stream" },
        });
      },
    });
    const url = new URL(`http://127.0.0.1:${upstream.port}/v1/chat/completions`);
    const client = new Http1Client();
    const calls = 10;
    const bodyBytes = 4 << 20;
    Bun.gc(true);
    const before = process.memoryUsage().heapUsed;
    const readers = [];
    for (let i = 0; i < calls; i++) {
      const body = JSON.stringify({ text: Buffer.alloc(bodyBytes, 97 + i).toString("latin1") });
      readers.push((await client.post({ url, headers: {}, body, abort: new CallAbort() })).reader());
    }
    for (const reader of readers) expect(Buffer.from((await reader.read()).value!).toString()).toBe("first");
    Bun.gc(true);
    // Held to the answers' end, the bodies (and the requests written from them) would be 80 MiB.
    // The bound leaves room for a few held by a stray reference (the loop's last `body`, a stack
    // slot the collector reads conservatively): that is not the leak this guards against.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(6 * bodyBytes);
    for (const reader of readers) await reader.cancel();
    await upstream.stop(true);
  });

  test("an abort mid-stream ends the reader and closes the connection", async () => {
    const upstream = rawUpstream((socket) =>
      socket.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n"),
    );
    const controller = new AbortController();
    const response = await post(new Http1Client(), upstream.url(), { signal: controller.signal });
    const reader = response.body!.getReader();
    expect(Buffer.from((await reader.read()).value!).toString()).toBe("first");
    controller.abort();
    await expect(reader.read()).rejects.toThrow(/aborted/);
    await waitFor(() => upstream.stats.closed === 1, "the upstream to see the connection closed");
  });

  test("a malformed answer fails the request and the connection is not reused", async () => {
    let answered = 0;
    const upstream = rawUpstream((socket) =>
      socket.write(++answered === 1 ? "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nnot-hex\r\n" : json("{}")),
    );
    const client = new Http1Client();
    const response = await post(client, upstream.url());
    await expect(response.text()).rejects.toThrow(Http1WireError);
    expect(await (await post(client, upstream.url(), { bufferUpTo: 1024 })).text()).toBe("{}");
    expect(upstream.stats.connections).toBe(2);
  });

  test("a header that would smuggle a second request is refused before anything is sent", async () => {
    const upstream = rawUpstream((socket) => socket.write(json("{}")));
    const smuggled = { "content-type": "application/json", "user-agent": "x\r\n\r\nPOST /admin HTTP/1.1\r\nhost: x" };
    await expect(post(new Http1Client(), upstream.url(), { headers: smuggled })).rejects.toThrow(Http1HeaderError);
    expect(upstream.stats.connections).toBe(0);
  });

  test("an upstream nobody listens on fails with a connect error, not a reset", async () => {
    const upstream = rawUpstream(() => {});
    const url = upstream.url();
    servers.pop()!.stop(true);
    const failure = await post(new Http1Client(), url).catch((error: Error & { code?: string }) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as { code?: string }).code).not.toBe("ECONNRESET");
  });
});
