/**
 * The servers the proxy benches run against, each in a process of its own (so its CPU is not
 * counted as the load client's): the scripted upstream, the bare Bun relay (the floor of the
 * runtime) and an OTLP collector stand-in. Started as `bun bench/support/benchServers.ts --ROLE
 * PORT_FILE [UPSTREAM_URL]` (the upstream: `--upstream PORT_FILE [CERT_FILE KEY_FILE]` for HTTPS);
 * each writes its port to PORT_FILE once it listens.
 */
import { readFileSync, writeFileSync } from "node:fs";

export const STREAM_CHUNKS = 20;
/** The scripted upstream's non-streamed answer (bench/proxy.ts's upstream answers with it too). */
export const CHAT_JSON = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 0,
  model: "bench",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
});

async function runUpstream(portFile: string, tls?: { cert: string; key: string }): Promise<void> {
  const encoder = new TextEncoder();
  const chunks = Array.from({ length: STREAM_CHUNKS }, (_, i) =>
    encoder.encode(
      `data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"bench","choices":[{"index":0,"delta":{"content":"t${i} "},"finish_reason":null}]}\n\n`,
    ),
  );
  const finish = encoder.encode(
    'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":20,"total_tokens":25}}\n\ndata: [DONE]\n\n',
  );
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    ...(tls ? { tls } : {}),
    async fetch(req) {
      const body = (await req.json()) as { stream?: boolean; bench_gap_ms?: number };
      const gap = body.bench_gap_ms ?? 0;
      if (!body.stream) return new Response(CHAT_JSON, { headers: { "content-type": "application/json" } });
      let i = 0;
      const next = (controller: ReadableStreamDefaultController<Uint8Array>) => {
        if (i < chunks.length) controller.enqueue(chunks[i++]!);
        else {
          controller.enqueue(finish);
          controller.close();
        }
      };
      // Spaced events wait on a timer each; the others go as fast as they are pulled.
      const pull =
        gap > 0
          ? async (controller: ReadableStreamDefaultController<Uint8Array>) => {
              if (i > 0) await Bun.sleep(gap);
              next(controller);
            }
          : next;
      return new Response(new ReadableStream({ pull }), { headers: { "content-type": "text/event-stream" } });
    },
  });
  writeFileSync(portFile, String(server.port));
}

/** The floor: what any Bun proxy must at least do. */
async function runRelay(portFile: string, upstream: string): Promise<void> {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const response = await fetch(`${upstream}${url.pathname.slice(3)}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: await req.arrayBuffer(),
      });
      return new Response(response.body, { status: response.status, headers: { "content-type": response.headers.get("content-type")! } });
    },
  });
  writeFileSync(portFile, String(server.port));
}

/** A collector stand-in for the telemetry rows: takes OTLP/HTTP exports and throws them away. */
export async function runCollector(portFile: string): Promise<void> {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      await req.arrayBuffer();
      return Response.json({});
    },
  });
  writeFileSync(portFile, String(server.port));
}

if (import.meta.main) {
  const [role, portFile, upstream, key] = process.argv.slice(2);
  // The upstream's optional two arguments are its TLS certificate and key files.
  if (role === "--upstream")
    await runUpstream(portFile!, upstream ? { cert: readFileSync(upstream, "utf8"), key: readFileSync(key!, "utf8") } : undefined);
  else if (role === "--relay") await runRelay(portFile!, upstream!);
  else if (role === "--collector") await runCollector(portFile!);
  else throw new Error(`benchServers: unknown role ${role}`);
}
