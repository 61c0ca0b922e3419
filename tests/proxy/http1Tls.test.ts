/**
 * agentd's own HTTP/1.1 client over TLS. A throwaway CA and leaf certificates are made with the
 * openssl CLI; the client trusts that CA through its `ca` option (production passes none and so
 * trusts what fetch trusts), except end to end, where the compiled ./agentd trusts it through
 * NODE_EXTRA_CA_CERTS as fetch does. Each refused certificate is also put to fetch, which must refuse
 * it with the same code; a refused connection must have carried no byte of the request.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { callAbortOn } from "../support/callAbort.ts";
import type { Server, TCPSocketListener } from "bun";
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Http1Client } from "../../src/proxy/upstream/http1Client.ts";
import { UpstreamAttempt } from "../../src/proxy/upstream/upstreamAttempt.ts";
import { UpstreamFailure } from "../../src/proxy/upstream/upstreamFailure.ts";
import { startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { ensureBinary } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { type KeyPair, makeCa, makeLeaf } from "../support/tlsCerts.ts";

type CertName = "good" | "otherName" | "untrusted" | "expired";

let dir: string;
let caPem: string;
const certs = {} as Record<CertName, KeyPair>;

const stops: Array<() => void> = [];

beforeAll(() => {
  dir = makeTempDir("agentd-tls-");
  caPem = makeCa(dir, "ca");
  makeCa(dir, "strangerCa");
  certs.good = makeLeaf(dir, "good", "ca", "IP:127.0.0.1,DNS:localhost", 2);
  certs.otherName = makeLeaf(dir, "otherName", "ca", "DNS:example.invalid", 2);
  certs.untrusted = makeLeaf(dir, "untrusted", "strangerCa", "IP:127.0.0.1,DNS:localhost", 2);
  certs.expired = makeLeaf(dir, "expired", "ca", "IP:127.0.0.1,DNS:localhost", -1);
});

afterAll(() => {
  for (const stop of stops.splice(0)) stop();
  removeTempDirs();
});

interface Seen {
  host: string | null;
  body: string;
  acceptEncoding: string | null;
  /** The client's port: the same for two requests on one connection. */
  clientPort: number | undefined;
}

const completion = (text: string) =>
  JSON.stringify({
    id: "chatcmpl-tls",
    object: "chat.completion",
    created: 1,
    model: "gpt-tls",
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });

const chunk = (content: string, finish: string | null = null) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-tls",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-tls",
    choices: [{ index: 0, delta: finish ? {} : { content }, finish_reason: finish }],
  })}\n\n`;

/** A TLS upstream (Bun.serve) answering chat completions, whole or streamed in pieces some ms apart. */
function trustedUpstream(cert: KeyPair): { server: Server<undefined>; seen: Seen[] } {
  const seen: Seen[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: cert,
    async fetch(request, srv) {
      const body = await request.text();
      seen.push({
        host: request.headers.get("host"),
        body,
        acceptEncoding: request.headers.get("accept-encoding"),
        clientPort: srv.requestIP(request)?.port,
      });
      if (!(JSON.parse(body) as { stream?: boolean }).stream) return Response.json(JSON.parse(completion("hello over tls")));
      const pieces = [chunk("hello "), chunk("over tls"), chunk("", "stop"), "data: [DONE]\n\n"];
      const stream = new ReadableStream<string>({
        async pull(controller) {
          const piece = pieces.shift();
          if (piece === undefined) return controller.close();
          await Bun.sleep(20);
          controller.enqueue(piece);
        },
      });
      return new Response(stream, { headers: { "content-type": "text/event-stream" } });
    },
  });
  stops.push(() => server.stop(true));
  return { server, seen };
}

/**
 * A TLS upstream on a raw socket: it counts connections and every decrypted byte it receives, and
 * answers 200 to whatever request comes (so a client that failed open would succeed).
 */
function hostileUpstream(cert: KeyPair): { port: number; stats: { connections: number; bytes: number } } {
  const stats = { connections: 0, bytes: 0 };
  const listener: TCPSocketListener<undefined> = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    tls: cert,
    socket: {
      // With a handshake handler, open() comes at the TCP connect rather than after the handshake.
      open() {
        stats.connections++;
      },
      handshake() {},
      data(socket, data) {
        stats.bytes += data.length;
        if (data.includes("\r\n\r\n")) socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok`);
      },
      error() {},
    },
  });
  stops.push(() => listener.stop(true));
  return { port: listener.port, stats };
}

const request = (stream: boolean) => JSON.stringify({ model: "gpt-tls", stream, messages: [{ role: "user", content: "hi" }] });

const post = (client: Http1Client, url: URL, stream: boolean, bufferUpTo?: number) =>
  client.post({
    url,
    headers: { "content-type": "application/json" },
    body: request(stream),
    abort: callAbortOn(AbortSignal.timeout(10_000)),
    ...(bufferUpTo === undefined ? {} : { bufferUpTo }),
  });

/** What fetch makes of the same URL with the same trust: the error code it refuses with, or "ok". */
async function fetchVerdict(url: URL, ca: string): Promise<string> {
  try {
    const response = await fetch(url, { method: "POST", body: request(false), tls: { ca } } as RequestInit);
    await response.text();
    return "ok";
  } catch (error) {
    return String((error as { code?: string }).code);
  }
}

describe("agentd's HTTP/1.1 client over TLS", () => {
  test("https:// is served unless a proxy for it is set or verification is turned off (fetch honours both)", () => {
    const url = new URL("https://api.openai.com/v1");
    expect(Http1Client.serves(url, {})).toBe(true);
    expect(Http1Client.serves(url, { HTTPS_PROXY: "http://proxy:3128" })).toBe(false);
    expect(Http1Client.serves(url, { https_proxy: "http://proxy:3128" })).toBe(false);
    expect(Http1Client.serves(url, { HTTP_PROXY: "http://proxy:3128" })).toBe(false);
    expect(Http1Client.serves(url, { all_proxy: "socks5://proxy" })).toBe(false);
    expect(Http1Client.serves(url, { NODE_TLS_REJECT_UNAUTHORIZED: "0" })).toBe(false);
    // A proxy for https only leaves plain HTTP to this client.
    expect(Http1Client.serves(new URL("http://127.0.0.1:8000/v1"), { HTTPS_PROXY: "http://proxy:3128" })).toBe(true);
  });

  for (const host of ["127.0.0.1", "localhost"])
    test(`a trusted upstream's answer, whole and streamed, on one kept-alive connection (${host})`, async () => {
      const { server, seen } = trustedUpstream(certs.good);
      const client = new Http1Client({ ca: caPem });
      const url = new URL(`https://${host}:${server.port}/v1/chat/completions`);

      const whole = await post(client, url, false, 1 << 20);
      expect(whole.status).toBe(200);
      expect((JSON.parse(await whole.text()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe(
        "hello over tls",
      );

      const streamed = await post(client, url, true);
      expect(streamed.status).toBe(200);
      const pieces: string[] = [];
      const decoder = new TextDecoder();
      for await (const piece of streamed.body!) pieces.push(decoder.decode(piece));
      const text = pieces.join("");
      expect(text).toContain('"content":"hello "');
      expect(text).toContain('"content":"over tls"');
      expect(text.endsWith("data: [DONE]\n\n")).toBe(true);

      expect(seen).toHaveLength(2);
      // Host as fetch sends it: the port named, as it is not 443.
      expect(seen.map((s) => s.host)).toEqual([`${host}:${server.port}`, `${host}:${server.port}`]);
      expect(seen[1]!.body).toBe(request(true));
      expect(seen[1]!.clientPort).toBe(seen[0]!.clientPort);
    });

  test("the pool is keyed by scheme: a plain-HTTP call to the same host and port does not reuse a TLS connection", async () => {
    const { server, seen } = trustedUpstream(certs.good);
    const client = new Http1Client({ ca: caPem });
    expect((await post(client, new URL(`https://127.0.0.1:${server.port}/v1`), false, 1 << 20)).status).toBe(200);
    // A TLS server does not understand plain HTTP: the call fails rather than riding the pooled TLS connection.
    const plain = await post(client, new URL(`http://127.0.0.1:${server.port}/v1`), false, 1 << 20).then(
      (response) => response.status,
      () => "failed",
    );
    expect(plain).not.toBe(200);
    expect(seen).toHaveLength(1);
  });

  const refusals: Array<{ name: string; cert: CertName; host: string; code: string }> = [
    { name: "a certificate from an untrusted CA", cert: "untrusted", host: "127.0.0.1", code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" },
    { name: "a certificate for another name (IP)", cert: "otherName", host: "127.0.0.1", code: "ERR_TLS_CERT_ALTNAME_INVALID" },
    { name: "a certificate for another name (DNS)", cert: "otherName", host: "localhost", code: "ERR_TLS_CERT_ALTNAME_INVALID" },
    { name: "an expired certificate", cert: "expired", host: "127.0.0.1", code: "CERT_HAS_EXPIRED" },
  ];
  for (const refusal of refusals)
    test(`${refusal.name} is refused, as fetch refuses it, and no byte of the request is sent`, async () => {
      const { port, stats } = hostileUpstream(certs[refusal.cert]);
      const url = new URL(`https://${refusal.host}:${port}/v1/chat/completions`);
      const error = (await post(new Http1Client({ ca: caPem }), url, false, 1 << 20).then(
        () => undefined,
        (failure: unknown) => failure,
      )) as (Error & { code?: string }) | undefined;
      expect(error?.code).toBe(refusal.code);
      expect(error?.message).toContain(`cannot connect to https://${refusal.host}:${port}: TLS:`);
      expect(stats.connections).toBe(1);
      expect(stats.bytes).toBe(0);
      expect(await fetchVerdict(url, caPem)).toBe(refusal.code);
    });

  test("a refused certificate fails the attempt as it failed through fetch: a connect failure", async () => {
    // The attempt's own client trusts what fetch trusts, which is not this test's CA.
    const { server } = trustedUpstream(certs.good);
    const url = `https://127.0.0.1:${server.port}/v1/chat/completions`;
    const timeouts = { connect_ms: 10_000, first_byte_ms: 10_000, idle_ms: 10_000, total_ms: 10_000 };
    const failures: UpstreamFailure[] = [];
    for (const ownClient of [true, false]) {
      const attempt = new UpstreamAttempt(new AbortController(), timeouts, ownClient);
      const failure = await attempt.send(url, { "content-type": "application/json" }, request(false), false).then(
        () => undefined,
        (error: unknown) => attempt.sendFailed(error),
      );
      expect(failure).toBeInstanceOf(UpstreamFailure);
      failures.push(failure as UpstreamFailure);
    }
    expect(failures.map((f) => f.kind)).toEqual(["connect", "connect"]);
    for (const failure of failures) expect(failure.message).toContain("unable to verify the first certificate");
  });
});

describe("end to end: ./agentd serve with NODE_EXTRA_CA_CERTS", () => {
  let daemon: DaemonProcess | undefined;
  afterAll(async () => {
    await daemon?.stop();
  }, 60_000);

  for (const upstreamClient of ["auto", "fetch"] as const)
    test(`an https provider is called through ${upstreamClient === "auto" ? "agentd's own client" : "fetch"}; an expired one is refused`, async () => {
      await ensureBinary();
      const { server, seen } = trustedUpstream(certs.good);
      const expired = hostileUpstream(certs.expired);
      // As root the worker runs as the service user, which must be able to read the CA file.
      chmodSync(dir, 0o755);
      chmodSync(join(dir, "ca.pem"), 0o644);
      const dataDir = join(makeTempDir("agentd-tls-data-"), "data");
      mkdirSync(dataDir);
      daemon = await startDaemon({
        dataDir,
        config: {
          providers: [
            { name: "secure", base_url: `https://127.0.0.1:${server.port}/v1`, models: ["gpt-tls"] },
            { name: "stale", base_url: `https://127.0.0.1:${expired.port}/v1`, models: ["gpt-stale"] },
          ],
          proxy: { upstream_client: upstreamClient, retry_base_ms: 10, retry_max_ms: 40 },
        },
        env: { NODE_EXTRA_CA_CERTS: join(dir, "ca.pem") },
      });
      const call = (model: string, stream: boolean) =>
        fetch(`${daemon!.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "hi" }] }),
        });
      for (const stream of [false, true]) {
        const response = await call("gpt-tls", stream);
        const text = await response.text();
        expect(response.status).toBe(200);
        expect(text).toContain(stream ? '"content":"over tls"' : "hello over tls");
      }
      expect(seen).toHaveLength(2);
      // fetch offers compressed answers; agentd's own client does not.
      for (const request of seen) expect(request.acceptEncoding === null).toBe(upstreamClient === "auto");

      const refused = await call("gpt-stale", false);
      expect(refused.status).toBe(502);
      expect(await refused.text()).toContain("certificate has expired");
      expect(expired.stats.connections).toBeGreaterThan(0);
      expect(expired.stats.bytes).toBe(0);
      await daemon.stop();
      daemon = undefined;
    }, 120_000);
});
