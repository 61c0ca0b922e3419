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
 *   client    the same duties with the upstream call on a minimal HTTP/1.1 client over Bun.connect
 *             (floorHttp1.ts) instead of fetch, a stream's bytes going out through a Bun direct stream
 *             as they arrive: what the floor is without fetch reading bodies into JS
 */
import { appendFileSync, openSync, writeFileSync, writeSync } from "node:fs";
import { type AnswerReceiver, FloorHttp1Client } from "./floorHttp1.ts";

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
  const upstreamUrl = new URL(upstream);
  const client = has("client") ? new FloorHttp1Client(upstreamUrl.hostname, Number(upstreamUrl.port)) : undefined;
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
      const controller = has("deadline") ? new AbortController() : undefined;
      const onAbort = () => controller?.abort();
      const timer = controller ? setTimeout(onAbort, 60_000) : undefined;
      if (controller) req.signal.addEventListener("abort", onAbort);
      const done = () => {
        clearTimeout(timer);
        if (controller) req.signal.removeEventListener("abort", onAbort);
      };
      if (client && controller) {
        const call = { model: body.model, stream: body.stream === true, started, done, log };
        return viaOwnClient(client, `${upstreamUrl.pathname}/chat/completions`, text, controller.signal, call);
      }
      const response = await fetch(`${upstream}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer k" },
        body: text,
        ...(controller ? { signal: controller.signal } : {}),
      });
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

/** Reads `usage` from a chat stream's bytes: decoded as they come, the `data:` events holding it parsed. */
function usageScanner(): { push(bytes: Uint8Array): void; tokens(): number | undefined } {
  const decoder = new TextDecoder();
  let pending = "";
  let tokens: number | undefined;
  return {
    push(bytes) {
      pending += decoder.decode(bytes, { stream: true });
      for (let end = pending.indexOf("\n\n"); end >= 0; end = pending.indexOf("\n\n")) {
        const event = pending.slice(0, end);
        pending = pending.slice(end + 2);
        if (event.startsWith("data: {") && event.includes('"usage"'))
          tokens = (JSON.parse(event.slice(6)) as { usage?: { total_tokens?: number } }).usage?.total_tokens;
      }
    },
    tokens: () => tokens,
  };
}

type Log = (fields: Record<string, unknown>) => void;

/** The scan rung's stream: bytes passed on as they come, scanned for usage. */
function scanned(
  body: ReadableStream<Uint8Array>,
  model: string,
  status: number,
  started: number,
  done: () => void,
  log: Log,
): ReadableStream<Uint8Array> {
  const scanner = usageScanner();
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        scanner.push(chunk);
        controller.enqueue(chunk);
      },
      flush() {
        done();
        log({ model, status, tokens: scanner.tokens(), ms: performance.now() - started });
      },
    }),
  );
}

interface Call {
  model: string;
  stream: boolean;
  started: number;
  done: () => void;
  log: Log;
}

/**
 * The client rung's upstream call: answered once the head is in (a stream) or the body is (JSON).
 * A stream's bytes are scanned and written to the client through a direct stream as they arrive.
 */
function viaOwnClient(client: FloorHttp1Client, path: string, text: string, signal: AbortSignal, call: Call): Promise<Response> {
  return new Promise((resolve, reject) => {
    const queue: Uint8Array[] = [];
    const scanner = usageScanner();
    let status = 0;
    let contentType = "";
    let ended = false;
    let failed = false;
    let wake: (() => void) | undefined;
    const finish = (tokens: number | undefined) => {
      call.done();
      call.log({ model: call.model, status, tokens, ms: performance.now() - call.started });
    };
    const stream = () =>
      new ReadableStream({
        type: "direct",
        async pull(sink) {
          for (;;) {
            while (queue.length) sink.write(queue.shift()!);
            if (ended || failed) break;
            await sink.flush();
            if (!queue.length && !ended && !failed) await new Promise<void>((resolve) => (wake = resolve));
          }
          finish(scanner.tokens());
          sink.close();
        },
      });
    const receiver: AnswerReceiver = {
      head(answerStatus, type) {
        status = answerStatus;
        contentType = type;
        if (call.stream) resolve(new Response(stream(), { status, headers: { "content-type": contentType } }));
      },
      data(bytes) {
        if (call.stream) scanner.push(bytes);
        queue.push(bytes);
        wake?.();
      },
      end() {
        ended = true;
        if (call.stream) {
          wake?.();
          return;
        }
        const answer = Buffer.concat(queue);
        finish((JSON.parse(answer.toString("utf8")) as { usage?: { total_tokens?: number } }).usage?.total_tokens);
        resolve(new Response(answer, { status, headers: { "content-type": contentType } }));
      },
      fail(error) {
        failed = true;
        if (status === 0 || !call.stream) reject(error);
        else wake?.();
      },
    };
    client.post(path, { "content-type": "application/json", authorization: "Bearer k" }, text, receiver, signal).catch(reject);
  });
}
