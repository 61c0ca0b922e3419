import { afterEach, describe, expect, test } from "bun:test";
import { CallAbort } from "../../src/proxy/upstream/callAbort.ts";
import type { Socket, TCPSocketListener } from "bun";
import { Http1Client } from "../../src/proxy/upstream/http1Client.ts";
import { Http1WireError } from "../../src/proxy/upstream/http1Wire.ts";

interface Peer {
  id: number;
  answered: boolean;
}

/** A raw TCP upstream: `onData` sees every piece each connection sends, with that connection's number (from 1). */
function upstream(onData: (socket: Socket<Peer>, data: Buffer) => void) {
  const stats = { connections: 0 };
  const listener: TCPSocketListener<Peer> = Bun.listen<Peer>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        socket.data = { id: ++stats.connections, answered: false };
      },
      data: onData,
    },
  });
  servers.push(listener);
  return { url: new URL(`http://127.0.0.1:${listener.port}/v1/chat/completions`), stats };
}

const servers: TCPSocketListener<Peer>[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.stop(true);
});

const post = (client: Http1Client, url: URL, options: { body?: string; bufferUpTo?: number } = {}) =>
  client.post({
    url,
    headers: { "content-type": "application/json" },
    body: options.body ?? "{}",
    abort: new CallAbort(),
    ...(options.bufferUpTo === undefined ? {} : { bufferUpTo: options.bufferUpTo }),
  });

describe("agentd's HTTP/1.1 client against a hostile upstream", () => {
  for (const [what, head] of [
    ["a header name", "HTTP/1.1 200 OK\r\nbad name: 1"],
    ["a status", "HTTP/1.1 600 Odd"],
  ])
    test(`${what} no Response can hold fails the call, whole or streamed, instead of leaving it pending`, async () => {
      const { url } = upstream((socket) => socket.write(`${head}\r\ncontent-length: 2\r\n\r\n{}`));
      const client = new Http1Client();
      await expect(post(client, url, { bufferUpTo: 1 << 20 })).rejects.toBeInstanceOf(Http1WireError);
      await expect(post(client, url)).rejects.toBeInstanceOf(Http1WireError);
    });

  test("a connection answered before its request was all written is not reused", async () => {
    const { url, stats } = upstream((socket, data) => {
      if (socket.data.id === 1) {
        // Refuses the request after its first bytes, and reads no more of it.
        socket.pause();
        socket.write("HTTP/1.1 413 Payload Too Large\r\ncontent-length: 0\r\n\r\n");
      } else if (data.includes("\r\n\r\n{}")) socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
    });
    const client = new Http1Client();
    const refused = await post(client, url, { body: "x".repeat(32 << 20), bufferUpTo: 1 << 20 });
    expect(refused.status).toBe(413);
    const answer = await post(client, url, { bufferUpTo: 1 << 20 });
    expect(await answer.text()).toBe("ok");
    expect(stats.connections).toBe(2);
  });
  test("a connection whose answer ended while a slow reader had it paused is reused reading", async () => {
    let hitFirst = false;
    const { url } = upstream((socket) => {
      if (socket.data.id === 1 && socket.data.answered) hitFirst = true;
      if (socket.data.id === 1 && !socket.data.answered) {
        socket.data.answered = true;
        // Past the 1 MiB a reader may leave queued: the client pauses on the answer's last byte.
        socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${(1 << 20) + 1}\r\n\r\n`);
        setTimeout(() => socket.write(Buffer.alloc((1 << 20) + 1, 120)), 0);
        return;
      }
      // Not kept: the pool hands out its newest connection first, so one parked after the first would
      // be taken every time and the first never reused.
      socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
    });
    const client = new Http1Client();
    const unread = await post(client, url);
    // Until the client has taken the whole first answer and parked its connection, requests go on new ones;
    // the first to reuse it must get its answer (else this waits for the test's timeout).
    while (!hitFirst) {
      const answer = await post(client, url, { bufferUpTo: 1 << 20 });
      expect(await answer.text()).toBe("ok");
      if (!hitFirst) await Bun.sleep(10);
    }
    await unread.body!.cancel();
  });
});
