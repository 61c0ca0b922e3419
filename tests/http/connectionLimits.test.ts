import { afterEach, expect, test } from "bun:test";
import type { Server } from "bun";
import { connect } from "node:net";
import { withConnectionLimits } from "../../src/http/connectionLimits.ts";
import type { ClientConnections } from "../../src/http/clientConnections.ts";

// Bun's idle timeout against handlers that work longer than it, through agentd's connection limits.
// uWS checks its timeouts every 4 s: a handler must outlast one check after the idle second.

const IDLE_S = 1;
const WORK_MS = 9_000;
const limits = {
  idleTimeoutS: IDLE_S,
  maxPerClient: 1_000,
  connections: { busiest: () => 0, count: () => 0 } as unknown as ClientConnections,
};

let server: Server<undefined> | undefined;
afterEach(async () => {
  await server?.stop(true);
  server = undefined;
});

/** Sends `request` raw on a fresh connection; resolves with what came back once `done` holds, or once the server closed it. */
function exchange(port: number, request: string, done: (received: string) => boolean): Promise<{ received: string; closedFirst: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk.toString();
      if (done(received)) {
        socket.destroy();
        resolve({ received, closedFirst: false });
      }
    });
    socket.on("close", () => resolve({ received, closedFirst: true }));
    socket.on("error", () => {});
    socket.on("connect", () => socket.write(request));
  });
}

test("handlers working longer than the idle timeout are answered: with a body, without one, and a stream silent between events", async () => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: IDLE_S,
    fetch: withConnectionLimits(async (request) => {
      if (request.method === "POST") await request.text();
      if (new URL(request.url).pathname !== "/stream") {
        await Bun.sleep(WORK_MS);
        return new Response("worked");
      }
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(encoder.encode("data: first\n\n"));
          await Bun.sleep(WORK_MS);
          controller.enqueue(encoder.encode("data: last\n\n"));
          controller.close();
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    }, limits),
  });
  const port = server.port!;
  const answered = (text: string) => text.includes("worked");
  const [get, emptyPost, post, chunked, stream] = await Promise.all([
    exchange(port, "GET /work HTTP/1.1\r\nHost: x\r\n\r\n", answered),
    exchange(port, "POST /work HTTP/1.1\r\nHost: x\r\ncontent-length: 0\r\n\r\n", answered),
    exchange(port, "POST /work HTTP/1.1\r\nHost: x\r\ncontent-length: 2\r\n\r\n{}", answered),
    exchange(port, "POST /work HTTP/1.1\r\nHost: x\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", answered),
    exchange(port, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n", (text) => text.includes("data: last")),
  ]);
  for (const outcome of [get, emptyPost, post, chunked, stream]) expect(outcome.closedFirst).toBe(false);
});
