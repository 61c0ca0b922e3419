/**
 * agentd's own HTTP/1.1 client against hostile upstreams and networks, mostly over TLS (a throwaway
 * openssl CA the client trusts through its `ca` option). The upstreams are raw sockets (Bun.listen)
 * so they can cut, reset and misbehave where a real server would not. Where sockets could leak, a
 * test counts the client's own sockets to the upstream (/proc): no more may stay than the pool keeps.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { callAbortOn } from "../support/callAbort.ts";
import type { Socket, TCPSocketListener } from "bun";
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Http1Client } from "../../src/proxy/upstream/http1Client.ts";
import type { UpstreamAnswer } from "../../src/proxy/upstream/upstreamAnswer.ts";
import { idleReuseMs } from "../../src/proxy/upstream/http1Wire.ts";
import { PROJECT_ROOT } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { type KeyPair, makeCa, makeLeaf } from "../support/tlsCerts.ts";

let dir: string;
let caPem: string;
let good: KeyPair;
let untrusted: KeyPair;

beforeAll(() => {
  dir = makeTempDir("agentd-tls-hostile-");
  caPem = makeCa(dir, "ca");
  makeCa(dir, "strangerCa");
  good = makeLeaf(dir, "good", "ca", "IP:127.0.0.1", 2);
  untrusted = makeLeaf(dir, "untrusted", "strangerCa", "IP:127.0.0.1", 2);
});
afterAll(() => removeTempDirs());

interface Peer {
  /** Requests seen on this connection (a request here: bytes up to a blank line; bodies are "{}"). */
  requests: number;
}

const listeners: TCPSocketListener<Peer>[] = [];
afterEach(() => {
  for (const listener of listeners.splice(0)) listener.stop(true);
});

/**
 * A raw upstream, TLS unless `cert` is null: `onRequest` runs for each request with its connection.
 * `holdOpen`: it never closes a connection the client ended (Bun's sockets otherwise close at the FIN).
 */
function upstream(
  onRequest: (socket: Socket<Peer>) => void,
  { cert = good, holdOpen = false }: { cert?: KeyPair | null; holdOpen?: boolean } = {},
) {
  const stats = { connections: 0 };
  const listener = Bun.listen<Peer>({
    hostname: "127.0.0.1",
    port: 0,
    allowHalfOpen: holdOpen,
    ...(cert ? { tls: cert } : {}),
    socket: {
      open(socket) {
        stats.connections++;
        socket.data = { requests: 0 };
      },
      // With it, open() comes at the TCP connect, before the handshake: refused connections count too.
      handshake() {},
      data(socket, data) {
        if (!data.includes("\r\n\r\n")) return;
        socket.data.requests++;
        onRequest(socket);
      },
      // With allowHalfOpen, this keeps a TLS socket open past the client's close_notify and FIN.
      end() {},
      error() {},
    },
  });
  listeners.push(listener);
  const scheme = cert ? "https" : "http";
  return { url: new URL(`${scheme}://127.0.0.1:${listener.port}/v1/chat/completions`), port: listener.port, stats };
}

const post = (client: Http1Client, url: URL, bufferUpTo?: number, signal = AbortSignal.timeout(5_000)) =>
  client.post({
    url,
    headers: { "content-type": "application/json" },
    body: "{}",
    abort: callAbortOn(signal),
    ...(bufferUpTo === undefined ? {} : { bufferUpTo }),
  });

/** The answer's status and whole body, or the code of the failure to get them (before or after the head). */
async function outcome(answer: Promise<UpstreamAnswer>): Promise<string> {
  try {
    const response = await answer;
    return `${response.status} ${await response.text()}`;
  } catch (error) {
    // An abort is a DOMException, whose code is a number.
    return `failed: ${error instanceof DOMException ? error.name : ((error as { code?: string }).code ?? (error as Error).name)}`;
  }
}

/** This process's open TCP sockets whose remote port is `port`: the client's side of its connections there. */
function clientSocketsTo(port: number): number {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"])
    for (const row of readFileSync(table, "utf8").split("\n").slice(1)) {
      const columns = row.trim().split(/\s+/);
      if (columns.length > 9 && Number.parseInt(columns[2]!.split(":")[1]!, 16) === port) inodes.add(columns[9]!);
    }
  let count = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      // Closed while it was looked at.
      continue;
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode && inodes.has(inode)) count++;
  }
  return count;
}

/** Waits (bounded) until the client holds `count` sockets to `port`: closes land a few turns after the call, later on a busy machine. */
async function socketsSettleAt(port: number, count: number): Promise<number> {
  for (let waited = 0; waited < 5_000 && clientSocketsTo(port) !== count; waited += 10) await Bun.sleep(10);
  return clientSocketsTo(port);
}

const OK = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";

describe("agentd's HTTP/1.1 client against a hostile upstream or network", () => {
  for (const tls of [true, false])
    for (const bufferUpTo of [1 << 20, undefined])
      test(`a body that ends at close, cut by a reset, fails rather than passing for a short answer (${tls ? "TLS" : "plain"}, ${bufferUpTo ? "buffered" : "streamed"})`, async () => {
        const { url } = upstream(
          (socket) => {
            socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{"choi');
            // terminate() resets the connection: no close_notify, no FIN.
            setTimeout(() => socket.terminate(), 20);
          },
          { cert: tls ? good : null },
        );
        expect(await outcome(post(new Http1Client({ ca: caPem }), url, bufferUpTo))).toBe("failed: ECONNRESET");
      });

  test("a body that ends at close, closed in order (close_notify and FIN), is whole", async () => {
    const { url } = upstream((socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{"ok":');
      setTimeout(() => {
        socket.write("true}");
        socket.end();
      }, 20);
    });
    expect(await outcome(post(new Http1Client({ ca: caPem }), url, 1 << 20))).toBe('200 {"ok":true}');
  });

  test("a request that finds its kept-alive connection dead is retried on a new connection, not on another pooled one", async () => {
    // Each connection answers its first request and drops the next unanswered, as a restarted upstream's would.
    const { url, stats } = upstream((socket) => (socket.data.requests === 1 ? socket.write(OK) : socket.terminate()));
    const client = new Http1Client({ ca: caPem });
    expect(await Promise.all([outcome(post(client, url, 1 << 20)), outcome(post(client, url, 1 << 20))])).toEqual(["200 ok", "200 ok"]);
    expect(stats.connections).toBe(2);
    expect(await outcome(post(client, url, 1 << 20))).toBe("200 ok");
    expect(stats.connections).toBe(3);
  });

  test("a connection the client ends is closed even when the upstream never closes its side", async () => {
    const { url, port } = upstream((socket) => socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"), {
      holdOpen: true,
    });
    const client = new Http1Client({ ca: caPem, closeWaitMs: 20 });
    for (let i = 0; i < 5; i++) expect(await outcome(post(client, url, 1 << 20))).toBe("200 ok");
    expect(await socketsSettleAt(port, 0)).toBe(0);
  });

  test("a connection the client ends does not keep its process alive while the upstream holds it open", async () => {
    const { url } = upstream((socket) => socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"), {
      holdOpen: true,
    });
    writeFileSync(join(dir, "ca-for-child.pem"), caPem);
    const script = join(dir, "call.ts");
    // A wait for the upstream's close far past this test's bound: only the process not waiting on it passes.
    writeFileSync(
      script,
      `import { Http1Client } from ${JSON.stringify(join(PROJECT_ROOT, "src/proxy/upstream/http1Client.ts"))};
import { CallAbort } from ${JSON.stringify(join(PROJECT_ROOT, "src/proxy/upstream/callAbort.ts"))};
import { CallAbort } from ${JSON.stringify(join(PROJECT_ROOT, "src/proxy/upstream/callAbort.ts"))};
const client = new Http1Client({ ca: await Bun.file(process.argv[3]).text(), closeWaitMs: 600_000 });
const answer = await client.post({ url: new URL(process.argv[2]), headers: {}, body: "{}", abort: new CallAbort(), bufferUpTo: 1024 });
console.log(await answer.text());
`,
    );
    const child = Bun.spawn([process.execPath, script, url.href, join(dir, "ca-for-child.pem")], { stdout: "pipe", stderr: "inherit" });
    const watchdog = setTimeout(() => child.kill("SIGKILL"), 10_000);
    const code = await child.exited;
    clearTimeout(watchdog);
    expect(await new Response(child.stdout).text()).toBe("ok\n");
    expect(code).toBe(0);
  });

  test("a refused certificate leaves no socket behind, nor anything pooled, however many calls race for it", async () => {
    const { url, port, stats } = upstream((socket) => socket.write(OK), { cert: untrusted });
    const client = new Http1Client({ ca: caPem });
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => outcome(post(client, url, 1 << 20))));
    expect(new Set(outcomes)).toEqual(new Set(["failed: UNABLE_TO_VERIFY_LEAF_SIGNATURE"]));
    expect(stats.connections).toBe(20);
    expect(await socketsSettleAt(port, 0)).toBe(0);
  });

  test("a handshake that never completes ends at the abort (a connect deadline), leaving no socket behind", async () => {
    // A plain TCP listener: it takes the ClientHello and says nothing.
    const { url, port } = upstream(() => {}, { cert: null });
    const tlsUrl = new URL(url.href.replace("http:", "https:"));
    const started = performance.now();
    expect(await outcome(post(new Http1Client({ ca: caPem }), tlsUrl, 1 << 20, AbortSignal.timeout(100)))).toBe("failed: AbortError");
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await socketsSettleAt(port, 0)).toBe(0);
  });

  test("many first calls at once to one TLS origin: each answered, and no more sockets kept than the pool holds", async () => {
    const { url, port, stats } = upstream((socket) => socket.write(OK));
    const client = new Http1Client({ ca: caPem });
    const outcomes = await Promise.all(Array.from({ length: 100 }, () => outcome(post(client, url, 1 << 20))));
    expect(new Set(outcomes)).toEqual(new Set(["200 ok"]));
    // The pool keeps up to 64 idle connections per origin.
    expect(await socketsSettleAt(port, 64)).toBe(64);
    // The next call rides a pooled connection.
    expect(await outcome(post(client, url, 1 << 20))).toBe("200 ok");
    expect(stats.connections).toBe(100);
  });

  for (const [what, afterAnswer] of [
    ["closed (close_notify and FIN)", (socket: Socket<Peer>) => socket.end()],
    ["reset", (socket: Socket<Peer>) => socket.terminate()],
    ["sent stray bytes on", (socket: Socket<Peer>) => socket.write("HTTP/1.1 408 Request Timeout\r\n\r\n")],
  ] as const)
    test(`a pooled TLS connection the upstream ${what} while it was idle is not reused`, async () => {
      const { url, port, stats } = upstream((socket) => {
        socket.write(OK);
        setTimeout(() => afterAnswer(socket), 10);
      });
      const client = new Http1Client({ ca: caPem });
      expect(await outcome(post(client, url, 1 << 20))).toBe("200 ok");
      expect(await socketsSettleAt(port, 0)).toBe(0);
      expect(await outcome(post(client, url, 1 << 20))).toBe("200 ok");
      expect(stats.connections).toBe(2);
    });

  test("repeated Keep-Alive timeouts: the shortest rules, whichever header or parameter it is in", () => {
    const keepAlive = (...values: string[]) => values.map((value): [string, string] => ["keep-alive", value]);
    expect(idleReuseMs(keepAlive("timeout=30", "timeout=3"), true)).toBe(2_000);
    expect(idleReuseMs(keepAlive("timeout=3", "timeout=30"), true)).toBe(2_000);
    expect(idleReuseMs(keepAlive("timeout=30, timeout=3"), false)).toBe(2_000);
    // Odd values: a fraction counts its whole seconds, a huge one is capped, one that is not a number is no hint.
    expect(idleReuseMs(keepAlive("timeout=5.5"), true)).toBe(4_000);
    expect(idleReuseMs(keepAlive("timeout=99999999999999999999999"), false)).toBe(60_000);
    expect(idleReuseMs(keepAlive(`timeout=${"9".repeat(400)}`), false)).toBe(60_000);
    expect(idleReuseMs(keepAlive("timeout=-5"), true)).toBe(60_000);
    expect(idleReuseMs(keepAlive("timeout=-5"), false)).toBe(4_000);
  });
});
