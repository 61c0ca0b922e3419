/**
 * Proxy benchmark: the same load client against a fast scripted upstream directly and through
 * agentd's proxy, on loopback, in one run. Prints a markdown table of ratios.
 *
 *   node_modules/.bin/bun bench/proxy.ts
 *   node_modules/.bin/bun bench/proxy.ts text-tool-calls   # only the text-tool-call row
 *
 * Three processes: the upstream and the proxy are children (killed by PID at the end), the load
 * client is this process. The proxy writes its JSON log lines to a pipe this process drains, as a
 * worker writes them to the supervisor.
 */
import { spawn, type Subprocess } from "bun";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitForFile } from "./support/benchRig.ts";
import { CHAT_JSON, runCollector } from "./support/benchServers.ts";

/** A difference with its sign: RSS may also shrink while streams are open (the GC runs). */
const signed = (value: number, digits: number) => `${value < 0 ? "−" : "+"}${Math.abs(value).toFixed(digits)}`;

const role = process.argv[2];
const STREAM_CHUNKS = 50;
/** A Hermes-style call the "textcall" model writes in its streamed text, cut into STREAM_CHUNKS pieces like the plain answer. */
const TEXT_CALL = `Let me look at the disk usage first.\n<tool_call>\n${JSON.stringify({ name: "exec_command", arguments: { cmd: "df -h /var/lib && du -sh /var/log/* | sort -h | tail -n 20", timeout_ms: 10000 } })}\n</tool_call>`;
const TEXT_CALL_PIECES = Array.from({ length: STREAM_CHUNKS }, (_, i) =>
  TEXT_CALL.slice(Math.floor((i * TEXT_CALL.length) / STREAM_CHUNKS), Math.floor(((i + 1) * TEXT_CALL.length) / STREAM_CHUNKS)),
);
/** The tools a text-tool-call request declares (a call is only read for a declared tool). */
const BENCH_TOOLS = [
  {
    type: "function",
    function: {
      name: "exec_command",
      parameters: { type: "object", properties: { cmd: { type: "string" }, timeout_ms: { type: "integer" } }, required: ["cmd"] },
    },
  },
];

async function runUpstream(portFile: string): Promise<void> {
  const encoder = new TextEncoder();
  const chunk = (i: number, content = `t${i} `) =>
    encoder.encode(
      `data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"bench","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`,
    );
  const finish = encoder.encode(
    `data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`,
  );
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const body = (await req.json()) as { stream?: boolean; model?: string };
      if (!body.stream) return new Response(CHAT_JSON, { headers: { "content-type": "application/json" } });
      const slow = body.model === "slow";
      const textCall = body.model === "textcall";
      let i = 0;
      return new Response(
        new ReadableStream({
          async pull(controller) {
            if (slow && i > 0) await Bun.sleep(1000);
            if (i < (slow ? 30 : STREAM_CHUNKS)) {
              controller.enqueue(textCall ? chunk(i, TEXT_CALL_PIECES[i]) : chunk(i));
              i++;
            } else {
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

/** The proxy alone; with `otlpEndpoint`, each request is also a span exported there (telemetry on). */
async function runProxy(portFile: string, upstreamUrl: string, otlpEndpoint?: string): Promise<void> {
  const { Hono } = await import("hono");
  const { createProxy, providerConfigSchema, proxyConfigSchema, proxyMigrations } = await import("../src/proxy/index.ts");
  const { baseMigrations, openStore } = await import("../src/core/store/index.ts");
  const { startTracing } = await import("../src/telemetry/index.ts");
  const { telemetryConfigSchema } = await import("../src/core/config/sections/telemetryConfig.ts");
  const { createLogger } = await import("../src/core/log/index.ts");
  const tracing = await startTracing(
    telemetryConfigSchema().parse({ otlp: { endpoint: otlpEndpoint } }),
    "bench",
    createLogger("telemetry"),
  );
  const db = openStore({ path: ":memory:", migrations: [...baseMigrations, ...proxyMigrations] });
  const proxy = createProxy({
    providers: [providerConfigSchema().parse({ name: "bench", base_url: upstreamUrl })],
    config: proxyConfigSchema().parse({}),
    db,
    tracer: tracing.tracer,
  });
  const app = new Hono();
  app.route("/v1", proxy.routes);
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: app.fetch, idleTimeout: 0 });
  await Bun.write(portFile, String(server.port));
}

const body = (stream: boolean, model = "bench") => JSON.stringify({ model, stream, messages: [{ role: "user", content: "hi" }] });
const toolsBody = (model: string) =>
  JSON.stringify({ model, stream: true, tools: BENCH_TOOLS, messages: [{ role: "user", content: "hi" }] });
/** The same request on Anthropic's Messages wire (what Claude Code sends), translated by agentd to the chat upstream. */
const messagesBody = (stream: boolean) =>
  JSON.stringify({ model: "bench", max_tokens: 256, stream, messages: [{ role: "user", content: "hi" }] });

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

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  if (pid === process.pid) {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  }
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100/s on Linux)
}

/** Latencies, wall time and CPU seconds per process gathered over the rounds of one side. */
class Side {
  readonly latencies: number[] = [];
  seconds = 0;
  requests = 0;
  readonly cpu = new Map<string, number>();

  async round(url: string, payload: string, concurrency: number, count: number, pids: Record<string, number>): Promise<void> {
    const cpuBefore = Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)] as const);
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < count) this.latencies.push(await one(url, payload));
      }),
    );
    this.seconds += (performance.now() - started) / 1000;
    this.requests += count;
    for (const [name, before] of cpuBefore) this.cpu.set(name, (this.cpu.get(name) ?? 0) + cpuSeconds(pids[name]!) - before);
  }

  sorted(): number[] {
    return this.latencies.sort((a, b) => a - b);
  }

  rps(): number {
    return this.requests / this.seconds;
  }

  /** "client 0.9, proxy 0.8, upstream 0.3": cores each process kept busy on average. */
  cores(): string {
    return [...this.cpu].map(([name, seconds]) => `${name} ${(seconds / this.seconds).toFixed(2)}`).join(", ");
  }
}

/**
 * Direct and through-agentd rounds alternate, so load from anything else on the machine falls on
 * both sides alike rather than on whichever ran second.
 */
async function compare(
  direct: string,
  through: string,
  concurrency: number,
  perRound: number,
  rounds: number,
  pids: Record<string, number>,
) {
  const d = new Side();
  const p = new Side();
  for (let i = 0; i < rounds; i++) {
    await d.round(direct, body(false), concurrency, perRound, pids);
    await p.round(through, body(false), concurrency, perRound, pids);
  }
  return { d, p };
}

async function streamOnce(url: string, stats: { ttfb: number[]; chunks: number; seconds: number }, payload = body(true)): Promise<void> {
  const started = performance.now();
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: payload });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let first = true;
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (first) {
      stats.ttfb.push(performance.now() - started);
      first = false;
    }
    text += decoder.decode(value, { stream: true });
  }
  stats.seconds += (performance.now() - started) / 1000;
  stats.chunks += text.split("\n\n").filter((frame) => frame.startsWith("data:")).length;
}

/** Sequential streams, alternating direct and through agentd. */
async function streamStats(direct: string, through: string, count: number) {
  const d = { ttfb: [] as number[], chunks: 0, seconds: 0 };
  const p = { ttfb: [] as number[], chunks: 0, seconds: 0 };
  for (let i = 0; i < count; i++) {
    await streamOnce(direct, d);
    await streamOnce(through, p);
  }
  const summary = (s: typeof d) => ({
    ttfbP50: percentile(
      s.ttfb.sort((a, b) => a - b),
      50,
    ),
    chunksPerSecond: s.chunks / s.seconds,
  });
  return { ds: summary(d), ps: summary(p) };
}

/** /v1/messages (to the chat upstream) against the chat path through the same proxy, rounds alternating. */
async function messagesVsChat(chatUrl: string, messagesUrl: string, pids: Record<string, number>) {
  const chat = new Side();
  const messages = new Side();
  for (let i = 0; i < 5; i++) {
    await chat.round(chatUrl, body(false), 1, 1000, pids);
    await messages.round(messagesUrl, messagesBody(false), 1, 1000, pids);
  }
  const c = { ttfb: [] as number[], chunks: 0, seconds: 0 };
  const m = { ttfb: [] as number[], chunks: 0, seconds: 0 };
  for (let i = 0; i < 300; i++) {
    await streamOnce(chatUrl, c);
    await streamOnce(messagesUrl, m, messagesBody(true));
  }
  const ttfb = (s: typeof c) =>
    percentile(
      s.ttfb.sort((a, b) => a - b),
      50,
    );
  return {
    p50: { chat: percentile(chat.sorted(), 50), messages: percentile(messages.sorted(), 50) },
    ttfb: { chat: ttfb(c), messages: ttfb(m) },
  };
}

/**
 * A streamed answer whose text carries a tool call (read and turned into a structured call by
 * agentd) against a plain streamed answer of as many chunks, both with tools declared and through
 * the same proxy, alternating; the figure is mean whole-stream time.
 */
async function textCallVsPlain(through: string, count: number) {
  const plain = { ttfb: [] as number[], chunks: 0, seconds: 0 };
  const call = { ttfb: [] as number[], chunks: 0, seconds: 0 };
  const check = await fetch(through, { method: "POST", headers: { "content-type": "application/json" }, body: toolsBody("textcall") });
  const checked = await check.text();
  if (!checked.includes('"tool_calls"') || checked.includes("<tool_call>"))
    throw new Error("the text tool call did not come back as a structured call");
  for (let i = 0; i < count; i++) {
    await streamOnce(through, plain, toolsBody("bench"));
    await streamOnce(through, call, toolsBody("textcall"));
  }
  return { plainMs: (plain.seconds / count) * 1000, callMs: (call.seconds / count) * 1000 };
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
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: body(true, "slow"),
        signal: controller.signal,
      });
      await response.body!.getReader().read();
    }),
  );
  Bun.gc(true);
  const rss = rssMb(pid);
  for (const controller of controllers) controller.abort();
  return rss;
}

const SETTLE_LIMIT_MB = 15;
const SETTLE_DEADLINE_MS = 15_000;

/**
 * RSS once the streams have ended: polled until it is back within the limit of idle or the
 * deadline passes (the proxy's own GC and allocator decide when pages go back), whichever first.
 */
async function settledRss(pid: number, idleMb: number): Promise<{ rss: number; ms: number }> {
  const started = performance.now();
  for (;;) {
    const rss = rssMb(pid);
    const ms = performance.now() - started;
    if (rss <= idleMb + SETTLE_LIMIT_MB || ms >= SETTLE_DEADLINE_MS) return { rss, ms };
    await Bun.sleep(250);
  }
}

/**
 * Telemetry off and on, alternating rounds through two proxies to the same upstream: the "on" one
 * exports a span per request to a local collector (metrics are counted by both). CPU is the
 * proxy process's own; latency is the client's.
 */
async function compareTelemetry(off: string, on: string, pids: { off: number; on: number }) {
  const sides = { off: { c1: new Side(), c32: new Side() }, on: { c1: new Side(), c32: new Side() } };
  for (let i = 0; i < 5; i++) {
    await sides.off.c1.round(off, body(false), 1, 1000, { proxy: pids.off });
    await sides.on.c1.round(on, body(false), 1, 1000, { proxy: pids.on });
    await sides.off.c32.round(off, body(false), 32, 6000, { proxy: pids.off });
    await sides.on.c32.round(on, body(false), 32, 6000, { proxy: pids.on });
  }
  const cpuPerRequest = (side: Side) => (side.cpu.get("proxy")! / side.requests) * 1e6;
  return {
    p50: { off: percentile(sides.off.c1.sorted(), 50), on: percentile(sides.on.c1.sorted(), 50) },
    cpu: { off: cpuPerRequest(sides.off.c32), on: cpuPerRequest(sides.on.c32) },
    rps: { off: sides.off.c32.rps(), on: sides.on.c32.rps() },
  };
}

function textCallRow(text: { plainMs: number; callMs: number }): [string, string, string, string] {
  return [
    `stream with a text tool call vs a plain stream through agentd, c=1 (ms per ${STREAM_CHUNKS}-chunk stream; direct column = plain)`,
    text.plainMs.toFixed(3),
    text.callMs.toFixed(3),
    `×${(text.callMs / text.plainMs).toFixed(2)} (limit ×1.2)`,
  ];
}

/** Reads the proxy's log lines off its stdout pipe and drops them, as the supervisor reads the worker's. */
async function drain(stream: ReadableStream<Uint8Array>): Promise<void> {
  for await (const _chunk of stream);
}

async function orchestrate(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "agentd-bench-"));
  const children: Subprocess[] = [];
  // Bun's fetch allows 256 connections at a time by default; 1,000 streams need more.
  const env = { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" };
  try {
    const upstream = spawn([process.execPath, import.meta.path, "--upstream", join(dir, "upstream")], {
      stdout: "ignore",
      stderr: "inherit",
      env,
    });
    children.push(upstream);
    const upstreamUrl = `http://127.0.0.1:${await waitForFile(join(dir, "upstream"), upstream)}/v1`;
    // A pipe, as in production (the supervisor reads the worker's stdout): writing to a file is another cost.
    const proxy = spawn([process.execPath, import.meta.path, "--proxy", join(dir, "proxy"), upstreamUrl], {
      stdout: "pipe",
      stderr: "inherit",
      env,
    });
    children.push(proxy);
    const drained = drain(proxy.stdout);
    const proxyUrl = `http://127.0.0.1:${await waitForFile(join(dir, "proxy"), proxy)}/v1`;
    const direct = `${upstreamUrl}/chat/completions`;
    const through = `${proxyUrl}/chat/completions`;
    const pids = { client: process.pid, proxy: proxy.pid, upstream: upstream.pid };
    if (role === "text-tool-calls") {
      await textCallVsPlain(through, 300); // warm-up
      const text = await textCallVsPlain(through, 1000);
      console.log(`| ${textCallRow(text).join(" | ")} |`);
      proxy.kill();
      await drained;
      return;
    }

    await compare(direct, through, 8, 3000, 1, pids); // warm-up (JIT, connection pools)
    const c1 = await compare(direct, through, 1, 1000, 5, pids);
    const c32 = await compare(direct, through, 32, 6000, 5, pids);
    const { ds, ps } = await streamStats(direct, through, 300);
    await textCallVsPlain(through, 300); // warm-up of the text tool-call reader
    const textCall = await textCallVsPlain(through, 1000);
    await messagesVsChat(through, `${proxyUrl}/messages`, pids); // warm-up of the translation
    const msg = await messagesVsChat(through, `${proxyUrl}/messages`, pids);
    const idleRss = rssMb(proxy.pid);
    const streamsRss = await openSlowStreams(`${proxyUrl}/chat/completions`, 1000, proxy.pid);
    const after = await settledRss(proxy.pid, idleRss);

    const collector = spawn([process.execPath, import.meta.path, "--collector", join(dir, "collector")], {
      stdout: "ignore",
      stderr: "inherit",
      env,
    });
    children.push(collector);
    const collectorUrl = `http://127.0.0.1:${await waitForFile(join(dir, "collector"), collector)}`;
    const traced = spawn([process.execPath, import.meta.path, "--proxy", join(dir, "traced"), upstreamUrl, collectorUrl], {
      stdout: "pipe",
      stderr: "inherit",
      env,
    });
    children.push(traced);
    const tracedDrained = drain(traced.stdout);
    const tracedUrl = `http://127.0.0.1:${await waitForFile(join(dir, "traced"), traced)}/v1/chat/completions`;
    await compare(through, tracedUrl, 8, 3000, 1, pids); // warm-up of the traced proxy
    const tel = await compareTelemetry(through, tracedUrl, { off: proxy.pid, on: traced.pid });

    const ms = (v: number) => v.toFixed(3);
    const [d1, p1, d32, p32] = [c1.d.sorted(), c1.p.sorted(), c32.d.sorted(), c32.p.sorted()];
    const rows: [string, string, string, string][] = [
      [
        "non-stream p50 latency, c=1 (ms)",
        ms(percentile(d1, 50)),
        ms(percentile(p1, 50)),
        `${signed(percentile(p1, 50) - percentile(d1, 50), 3)} ms`,
      ],
      [
        "non-stream p99 latency, c=1 (ms)",
        ms(percentile(d1, 99)),
        ms(percentile(p1, 99)),
        `${signed(percentile(p1, 99) - percentile(d1, 99), 3)} ms`,
      ],
      [
        "non-stream p50 latency, c=32 (ms)",
        ms(percentile(d32, 50)),
        ms(percentile(p32, 50)),
        `×${(percentile(p32, 50) / percentile(d32, 50)).toFixed(2)}`,
      ],
      [
        "non-stream p99 latency, c=32 (ms)",
        ms(percentile(d32, 99)),
        ms(percentile(p32, 99)),
        `×${(percentile(p32, 99) / percentile(d32, 99)).toFixed(2)}`,
      ],
      ["throughput, c=32 (req/s)", c32.d.rps().toFixed(0), c32.p.rps().toFixed(0), `×${(c32.p.rps() / c32.d.rps()).toFixed(2)}`],
      ["cores busy at c=32", c32.d.cores(), c32.p.cores(), "—"],
      ["proxy CPU per request, c=32 (µs)", "—", ((c32.p.cpu.get("proxy")! / c32.p.requests) * 1e6).toFixed(1), "—"],
      ["stream TTFB p50, c=1 (ms)", ms(ds.ttfbP50), ms(ps.ttfbP50), `${signed(ps.ttfbP50 - ds.ttfbP50, 3)} ms`],
      [
        "/v1/messages → chat upstream vs chat path through agentd: non-stream p50, c=1 (ms; direct column = chat path)",
        ms(msg.p50.chat),
        ms(msg.p50.messages),
        `${signed(msg.p50.messages - msg.p50.chat, 3)} ms (goal within 0.1 ms)`,
      ],
      [
        "/v1/messages → chat upstream vs chat path through agentd: stream TTFB p50, c=1 (ms; direct column = chat path)",
        ms(msg.ttfb.chat),
        ms(msg.ttfb.messages),
        `${signed(msg.ttfb.messages - msg.ttfb.chat, 3)} ms (goal within 0.1 ms)`,
      ],
      [
        `stream chunks/s, c=1 (${STREAM_CHUNKS + 2}-event streams)`,
        ds.chunksPerSecond.toFixed(0),
        ps.chunksPerSecond.toFixed(0),
        `×${(ps.chunksPerSecond / ds.chunksPerSecond).toFixed(2)}`,
      ],
      textCallRow(textCall),
      [
        "proxy RSS idle → 1,000 open slow streams (MB)",
        "—",
        `${idleRss.toFixed(1)} → ${streamsRss.toFixed(1)}`,
        `${signed(streamsRss - idleRss, 1)} MB`,
      ],
      [
        `proxy RSS after the 1,000 streams end (MB; limit idle + ${SETTLE_LIMIT_MB})`,
        "—",
        `${after.rss.toFixed(1)} after ${(after.ms / 1000).toFixed(1)} s`,
        `${signed(after.rss - idleRss, 1)} MB (${after.rss <= idleRss + SETTLE_LIMIT_MB ? "met" : "NOT met"})`,
      ],
      [
        "telemetry off → on: proxy CPU per request, c=32 (µs)",
        tel.cpu.off.toFixed(1),
        tel.cpu.on.toFixed(1),
        `${signed(((tel.cpu.on - tel.cpu.off) / tel.cpu.off) * 100, 1)} % (limit +10 %)`,
      ],
      [
        "telemetry off → on: non-stream p50 latency, c=1 (ms)",
        ms(tel.p50.off),
        ms(tel.p50.on),
        `${signed(tel.p50.on - tel.p50.off, 3)} ms (limit +0.05 ms)`,
      ],
      [
        "telemetry off → on: throughput, c=32 (req/s)",
        tel.rps.off.toFixed(0),
        tel.rps.on.toFixed(0),
        `×${(tel.rps.on / tel.rps.off).toFixed(2)}`,
      ],
    ];
    console.log(
      `\nagentd proxy benchmark — Bun ${Bun.version}, ${navigator.hardwareConcurrency} cores shared by client, proxy and upstream, loopback; direct and proxied rounds alternate\n`,
    );
    console.log("| measure | direct | through agentd | proxy vs direct |");
    console.log("| --- | ---: | ---: | ---: |");
    for (const row of rows) console.log(`| ${row.join(" | ")} |`);
    proxy.kill();
    traced.kill();
    await Promise.all([drained, tracedDrained]);
  } finally {
    for (const child of children) child.kill();
    await Promise.all(children.map((child) => child.exited));
    rmSync(dir, { recursive: true, force: true });
  }
}

// Dispatch last: the helpers above must be initialised before a role runs.
if (role === "--upstream") await runUpstream(process.argv[3]!);
else if (role === "--proxy") await runProxy(process.argv[3]!, process.argv[4]!, process.argv[5]);
else if (role === "--collector") await runCollector(process.argv[3]!);
else if (role === undefined || role === "text-tool-calls") await orchestrate();
else throw new Error(`bench/proxy.ts: unknown argument ${role}; give none, or "text-tool-calls"`);
