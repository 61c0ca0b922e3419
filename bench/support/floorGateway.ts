/**
 * The least a gateway with agentd's duties must do, in rungs that each add one duty to the bare
 * relay (bench/support/benchServers.ts), for bench/floor.ts: how much of agentd's cost over the
 * relay any Bun gateway would pay, and how much is agentd's own.
 *
 *   bun bench/support/floorGateway.ts RUNG PORT_FILE UPSTREAM_URL
 *
 * Rungs, each with the ones before it:
 *   parse     the request's length and credential headers read (a gateway limits bodies and
 *             checks callers), the body read whole and parsed (it routes by `model`) and sent on as text; a
 *             non-streamed answer read whole and parsed for `usage`, a streamed one passed on as bytes
 *   deadline  an AbortController per upstream call, tied to the client's abort, with a deadline timer
 *   log       one JSON line per request on stdout, batched every 10 ms, read by a parent process
 *             that peeks each line's event and appends it to a file (agentd's supervisor and worker);
 *             the parent writes the child's pid to PORT_FILE.child
 *   scan      a streamed answer decoded in JS, each event's `data:` line scanned for `usage`, and the
 *             bytes passed on through a TransformStream
 *   client    the same duties with the upstream call on agentd's own HTTP/1.1 client
 *             (src/proxy/upstream/http1Client.ts) instead of fetch: what the floor is without fetch
 */
import { appendFileSync, openSync, writeFileSync, writeSync } from "node:fs";
import { CallAbort } from "../../src/proxy/upstream/callAbort.ts";
import { Http1Client } from "../../src/proxy/upstream/http1Client.ts";

const RUNGS = ["parse", "deadline", "log", "scan", "client"] as const;
type Rung = (typeof RUNGS)[number];

const [rungName, portFile, upstream] = process.argv.slice(2) as [Rung, string, string];
const level = RUNGS.indexOf(rungName);
if (level < 0 || !portFile || !upstream) throw new Error(`usage: floorGateway.ts ${RUNGS.join("|")} PORT_FILE UPSTREAM_URL`);
const has = (rung: Rung) => level >= RUNGS.indexOf(rung);

if (has("log") && !process.env.FLOOR_CHILD) await superviseChild();
else serve();

/** The parent of the log rung: spawns the gateway, reads its stdout line by line, appends to a file. */
async function superviseChild(): Promise<void> {
  const child = Bun.spawn([process.execPath, import.meta.path, rungName, portFile, upstream], {
    stdout: "pipe",
    stderr: "inherit",
    env: { ...process.env, FLOOR_CHILD: "1" },
  });
  writeFileSync(`${portFile}.child`, String(child.pid));
  process.on("SIGTERM", () => {
    child.kill();
    process.exit(0);
  });
  const logFd = openSync(`${portFile}.log`, "a");
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of child.stdout) {
    pending += decoder.decode(chunk, { stream: true });
    const end = pending.lastIndexOf("\n");
    if (end < 0) continue;
    const lines = pending.slice(0, end + 1);
    pending = pending.slice(end + 1);
    let kept = "";
    for (const line of lines.split("\n")) {
      if (!line) continue;
      // What a watchdog does: peek the event name without parsing the line.
      const at = line.indexOf('"event":"');
      if (at >= 0 && line.startsWith("http.listening", at + 9)) JSON.parse(line);
      kept += `${line}\n`;
    }
    appendFileSync(logFd, kept);
  }
}

function serve(): void {
  let batch: string[] = [];
  const log = (fields: Record<string, unknown>) => {
    if (batch.length === 0) setTimeout(flush, 10);
    batch.push(JSON.stringify({ ts: new Date().toISOString(), level: "info", component: "proxy", event: "proxy.request", ...fields }));
  };
  const flush = () => {
    writeSync(1, `${batch.join("\n")}\n`);
    batch = [];
  };
  const upstreamUrl = new URL(`${upstream}/chat/completions`);
  const client = has("client") ? new Http1Client() : undefined;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const started = performance.now();
      // Reading any header makes Bun copy them all into a Headers object: a cost every gateway pays.
      if (Number(req.headers.get("content-length") ?? 0) > 1 << 20 || req.headers.get("authorization") === "Bearer refused")
        return Response.json({ error: { code: "refused" } }, { status: 413 });
      const text = await req.text();
      const body = JSON.parse(text) as { model?: string; stream?: boolean };
      if (typeof body.model !== "string") return Response.json({ error: { code: "bad_request" } }, { status: 400 });
      // As agentd gives up on a call (src/proxy/upstream/callAbort.ts); fetch gets a real signal from it.
      const abort = has("deadline") ? new CallAbort() : undefined;
      const onAbort = () => abort?.abort();
      const timer = abort ? setTimeout(onAbort, 60_000) : undefined;
      if (abort) req.signal.addEventListener("abort", onAbort);
      const done = () => {
        clearTimeout(timer);
        if (abort) req.signal.removeEventListener("abort", onAbort);
      };
      const headers = { "content-type": "application/json", authorization: "Bearer k" };
      const response =
        client && abort
          ? await client.post({
              url: upstreamUrl,
              headers,
              body: text,
              abort,
              ...(body.stream ? {} : { bufferUpTo: 1 << 20 }),
            })
          : await fetch(upstreamUrl, { method: "POST", headers, body: text, ...(abort ? { signal: abort.signal() } : {}) });
      const contentType = response.headers.get("content-type") ?? "application/json";
      if (!body.stream) {
        const answer = await response.text();
        const usage = (JSON.parse(answer) as { usage?: { total_tokens?: number } }).usage;
        done();
        if (has("log")) log({ model: body.model, status: response.status, tokens: usage?.total_tokens, ms: performance.now() - started });
        return new Response(answer, { status: response.status, headers: { "content-type": contentType } });
      }
      if (!has("scan")) {
        done();
        if (has("log")) log({ model: body.model, status: response.status, ms: performance.now() - started });
        return new Response(response.body, { status: response.status, headers: { "content-type": contentType } });
      }
      return new Response(scanned(response.body!, body.model, response.status, started, done, log), {
        status: response.status,
        headers: { "content-type": contentType },
      });
    },
  });
  writeFileSync(portFile, String(server.port));
}

/** The scan rung's stream: bytes passed on as they come; each `data:` event with "usage" parsed. */
function scanned(
  body: ReadableStream<Uint8Array>,
  model: string,
  status: number,
  started: number,
  done: () => void,
  log: (fields: Record<string, unknown>) => void,
): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  let pending = "";
  let tokens: number | undefined;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        pending += decoder.decode(chunk, { stream: true });
        for (let end = pending.indexOf("\n\n"); end >= 0; end = pending.indexOf("\n\n")) {
          const event = pending.slice(0, end);
          pending = pending.slice(end + 2);
          if (event.startsWith("data: {") && event.includes('"usage"'))
            tokens = (JSON.parse(event.slice(6)) as { usage?: { total_tokens?: number } }).usage?.total_tokens;
        }
        controller.enqueue(chunk);
      },
      flush() {
        done();
        log({ model, status, tokens, ms: performance.now() - started });
      },
    }),
  );
}
