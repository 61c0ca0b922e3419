/**
 * Proxy benchmark: the same load client against a fast scripted upstream directly and through
 * agentd's proxy, on loopback, in one run. Prints a markdown table of ratios.
 *
 *   node_modules/.bin/bun bench/proxy.ts
 *
 * Three processes: the upstream and the proxy are children (killed by PID at the end), the load
 * client is this process. The proxy logs its JSON lines to /dev/null as a worker would to a pipe.
 */
import { spawn, type Subprocess } from "bun";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const role = process.argv[2];
const CHAT_JSON = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 0,
  model: "bench",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
});
const STREAM_CHUNKS = 50;


async function runUpstream(portFile: string): Promise<void> {
  const encoder = new TextEncoder();
  const chunk = (i: number) => encoder.encode(`data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"bench","choices":[{"index":0,"delta":{"content":"t${i} "},"finish_reason":null}]}\n\n`);
  const finish = encoder.encode(`data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`);
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const body = (await req.json()) as { stream?: boolean; model?: string };
      if (!body.stream) return new Response(CHAT_JSON, { headers: { "content-type": "application/json" } });
      const slow = body.model === "slow";
      let i = 0;
      return new Response(
        new ReadableStream({
          async pull(controller) {
            if (slow && i > 0) await Bun.sleep(1000);
            if (i < (slow ? 30 : STREAM_CHUNKS)) controller.enqueue(chunk(i++));
            else {
              controller.enqueue(finish);
              controller.close();
            }
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    },
  });
  await Bun.write(portFile, String(server.port));
}

async function runProxy(portFile: string, upstreamUrl: string): Promise<void> {
  const { Hono } = await import("hono");
  const { createProxy, providerConfigSchema, proxyConfigSchema, proxyMigrations } = await import("../src/proxy/index.ts");
  const { baseMigrations, openStore } = await import("../src/store/index.ts");
  const db = openStore({ path: ":memory:", migrations: [...baseMigrations, ...proxyMigrations] });
  const proxy = createProxy({ providers: [providerConfigSchema.parse({ name: "bench", base_url: upstreamUrl })], config: proxyConfigSchema.parse({}), db });
  const app = new Hono();
  app.route("/v1", proxy.routes);
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: app.fetch, idleTimeout: 0 });
  await Bun.write(portFile, String(server.port));
}

async function waitForFile(path: string, child: Subprocess): Promise<string> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    try {
      const text = readFileSync(path, "utf8");
      if (text) return text;
    } catch {
      // Not written yet.
    }
    if (child.exitCode !== null) throw new Error(`bench child exited with ${child.exitCode}`);
    if (performance.now() > deadline) throw new Error(`bench child did not announce its port in ${path}`);
    await Bun.sleep(10);
  }
}

const body = (stream: boolean, model = "bench") => JSON.stringify({ model, stream, messages: [{ role: "user", content: "hi" }] });

async function one(url: string, payload: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: payload });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`status ${response.status}`);
  return performance.now() - started;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Runs `count` requests with `concurrency` workers; returns sorted latencies and req/s. */
async function load(url: string, payload: string, concurrency: number, count: number) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) latencies.push(await one(url, payload));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { latencies, rps: count / seconds };
}

async function streamStats(url: string, count: number) {
  const ttfb: number[] = [];
  let chunks = 0;
  let streaming = 0;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: body(true) });
    const reader = response.body!.getReader();
    let first = true;
    let text = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (first) {
        ttfb.push(performance.now() - started);
        first = false;
      }
      text += new TextDecoder().decode(value);
    }
    streaming += performance.now() - started;
    chunks += text.split("\n\n").filter((frame) => frame.startsWith("data:")).length;
  }
  ttfb.sort((a, b) => a - b);
  return { ttfbP50: percentile(ttfb, 50), chunksPerSecond: chunks / (streaming / 1000) };
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
  return kb / 1024;
}

/** Opens `count` slow streams, waits for each one's first chunk, measures RSS, then closes them. */
async function openSlowStreams(url: string, count: number, pid: number): Promise<number> {
  const controllers: AbortController[] = [];
  await Promise.all(
    Array.from({ length: count }, async () => {
      const controller = new AbortController();
      controllers.push(controller);
      const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: body(true, "slow"), signal: controller.signal });
      await response.body!.getReader().read();
    }),
  );
  Bun.gc(true);
  const rss = rssMb(pid);
  for (const controller of controllers) controller.abort();
  return rss;
}

async function orchestrate(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "agentd-bench-"));
  const children: Subprocess[] = [];
  // Bun's fetch allows 256 connections at a time by default; 1,000 streams need more.
  const env = { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" };
  try {
    const upstream = spawn([process.execPath, import.meta.path, "--upstream", join(dir, "upstream")], { stdout: "ignore", stderr: "inherit", env });
    children.push(upstream);
    const upstreamUrl = `http://127.0.0.1:${await waitForFile(join(dir, "upstream"), upstream)}/v1`;
    const proxy = spawn([process.execPath, import.meta.path, "--proxy", join(dir, "proxy"), upstreamUrl], { stdout: Bun.file("/dev/null"), stderr: "inherit", env });
    children.push(proxy);
    const proxyUrl = `http://127.0.0.1:${await waitForFile(join(dir, "proxy"), proxy)}/v1`;
    const direct = `${upstreamUrl}/chat/completions`;
    const through = `${proxyUrl}/chat/completions`;

    for (const url of [direct, through]) await load(url, body(false), 8, 3000); // warm-up (JIT, connection pools)
    const d1 = await load(direct, body(false), 1, 3000);
    const p1 = await load(through, body(false), 1, 3000);
    const d32 = await load(direct, body(false), 32, 30_000);
    const p32 = await load(through, body(false), 32, 30_000);
    const ds = await streamStats(direct, 300);
    const ps = await streamStats(through, 300);
    const idleRss = rssMb(proxy.pid);
    const streamsRss = await openSlowStreams(`${proxyUrl}/chat/completions`, 1000, proxy.pid);

    const ms = (v: number) => v.toFixed(3);
    const rows: [string, string, string, string][] = [
      ["non-stream p50 latency, c=1 (ms)", ms(percentile(d1.latencies, 50)), ms(percentile(p1.latencies, 50)), `+${ms(percentile(p1.latencies, 50) - percentile(d1.latencies, 50))} ms`],
      ["non-stream p99 latency, c=1 (ms)", ms(percentile(d1.latencies, 99)), ms(percentile(p1.latencies, 99)), `+${ms(percentile(p1.latencies, 99) - percentile(d1.latencies, 99))} ms`],
      ["non-stream p50 latency, c=32 (ms)", ms(percentile(d32.latencies, 50)), ms(percentile(p32.latencies, 50)), `×${(percentile(p32.latencies, 50) / percentile(d32.latencies, 50)).toFixed(2)}`],
      ["non-stream p99 latency, c=32 (ms)", ms(percentile(d32.latencies, 99)), ms(percentile(p32.latencies, 99)), `×${(percentile(p32.latencies, 99) / percentile(d32.latencies, 99)).toFixed(2)}`],
      ["throughput, c=32 (req/s)", d32.rps.toFixed(0), p32.rps.toFixed(0), `×${(p32.rps / d32.rps).toFixed(2)}`],
      ["stream TTFB p50, c=1 (ms)", ms(ds.ttfbP50), ms(ps.ttfbP50), `+${ms(ps.ttfbP50 - ds.ttfbP50)} ms`],
      [`stream chunks/s, c=1 (${STREAM_CHUNKS + 2}-event streams)`, ds.chunksPerSecond.toFixed(0), ps.chunksPerSecond.toFixed(0), `×${(ps.chunksPerSecond / ds.chunksPerSecond).toFixed(2)}`],
      ["proxy RSS idle → 1,000 open slow streams (MB)", "—", `${idleRss.toFixed(1)} → ${streamsRss.toFixed(1)}`, `+${(streamsRss - idleRss).toFixed(1)} MB`],
    ];
    console.log(`\nagentd proxy benchmark — Bun ${Bun.version}, ${navigator.hardwareConcurrency} cores shared by client, proxy and upstream, loopback\n`);
    console.log("| measure | direct | through agentd | proxy vs direct |");
    console.log("| --- | ---: | ---: | ---: |");
    for (const row of rows) console.log(`| ${row.join(" | ")} |`);
  } finally {
    for (const child of children) child.kill();
    await Promise.all(children.map((child) => child.exited));
    rmSync(dir, { recursive: true, force: true });
  }
}

// Dispatch last: the helpers above must be initialised before a role runs.
if (role === "--upstream") await runUpstream(process.argv[3]!);
else if (role === "--proxy") await runProxy(process.argv[3]!, process.argv[4]!);
else await orchestrate();
