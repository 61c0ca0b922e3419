/**
 * The whole compiled agentd (supervisor + worker, as `./agentd serve` runs) against the floor of
 * its own runtime: a bare Bun relay (Bun.serve whose handler forwards the body with fetch and
 * returns the upstream's body). Same scripted upstream, same load client, rounds interleaved so
 * machine load falls on both alike; every figure is printed as a ratio to the relay's. CPU and
 * throughput figures are the median round's, and each ratio the median of the paired rounds' ratios.
 *
 *   node_modules/.bin/bun bench/relay.ts      (or: bun run bench relay)
 *
 * Targets (issue 23): CPU per request ≤ 1.5× the relay's, streamed and not; c=32 throughput ≥ 0.7×;
 * c=1 p50 ≤ relay + 0.05 ms; stream TTFB ≤ relay + 0.1 ms; telemetry on (OTLP export, the telemetry
 * row: a second agentd against the first, not the relay) ≤ +10 % CPU; idle RSS ≤ 90 MB and PSS ≤ 60 MB.
 * The c=1 rows run twice: as the scheduler places the processes, and with all of them on CPU 0
 * (taskset), where a request's hops between processes cost no wake-up of another CPU: there the
 * figures hold run after run, and measure the work itself.
 * Every process it starts is stopped by its pid at the end.
 */
import type { Subprocess } from "bun";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AGENTD, ensureBinary } from "../tests/support/binary.ts";

const role = process.argv[2];
const STREAM_CHUNKS = 20;
const CHAT_JSON = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 0,
  model: "bench",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
});

async function runUpstream(portFile: string): Promise<void> {
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
    async fetch(req) {
      const body = (await req.json()) as { stream?: boolean };
      if (!body.stream) return new Response(CHAT_JSON, { headers: { "content-type": "application/json" } });
      let i = 0;
      return new Response(
        new ReadableStream({
          pull(controller) {
            if (i < chunks.length) controller.enqueue(chunks[i++]!);
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

/** A collector stand-in for the telemetry row: takes OTLP/HTTP exports and throws them away. */
async function runCollector(portFile: string): Promise<void> {
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

async function waitForFile(path: string, child: Subprocess): Promise<string> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    try {
      const text = readFileSync(path, "utf8");
      if (text) return text;
    } catch {
      // Not written yet.
    }
    if (child.exitCode !== null) throw new Error(`bench child exited with ${child.exitCode}`);
    if (performance.now() > deadline) throw new Error(`bench child did not announce itself in ${path}`);
    await Bun.sleep(20);
  }
}

/**
 * CPU seconds a process's threads have run, to the nanosecond (schedstat): /proc/PID/stat counts
 * in 10 ms ticks, too coarse for a round of a few hundred requests.
 */
function cpuSeconds(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns / 1e9;
}

function memoryOf(pid: number): { rss: number; pss: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup)![1]) / 1024;
  return { rss: kb("Rss"), pss: kb("Pss") };
}

const request = (stream: boolean) =>
  JSON.stringify({
    model: "bench",
    stream,
    messages: [{ role: "user", content: "hi" }],
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  });

async function one(url: string, payload: string): Promise<{ ms: number; ttfb: number }> {
  const started = performance.now();
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: payload });
  const reader = response.body!.getReader();
  let ttfb = -1;
  for (;;) {
    const { done } = await reader.read();
    if (ttfb < 0) ttfb = performance.now() - started;
    if (done) break;
  }
  if (response.status !== 200) throw new Error(`status ${response.status} from ${url}`);
  return { ms: performance.now() - started, ttfb };
}

class Side {
  readonly ms: number[] = [];
  readonly ttfb: number[] = [];
  requests = 0;
  /** CPU seconds by process, in the order pids() lists them (agentd: supervisor, worker). */
  readonly cpuByProcess: number[] = [];
  /** CPU µs per request of each round, in order: paired with the other side's rounds. */
  readonly perRound: number[] = [];
  /** Requests per second of each round, in order. */
  readonly ratePerRound: number[] = [];

  constructor(
    readonly url: string,
    readonly pids: () => number[],
  ) {}

  async round(payload: string, concurrency: number, count: number): Promise<void> {
    const pids = this.pids();
    const before = pids.map(cpuSeconds);
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < count) {
          const { ms, ttfb } = await one(this.url, payload);
          this.ms.push(ms);
          this.ttfb.push(ttfb);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    this.requests += count;
    this.ratePerRound.push(count / seconds);
    let round = 0;
    pids.forEach((pid, i) => {
      const spent = cpuSeconds(pid) - before[i]!;
      round += spent;
      this.cpuByProcess[i] = (this.cpuByProcess[i] ?? 0) + spent;
    });
    this.perRound.push((round / count) * 1e6);
  }

  p50(of: number[]): number {
    const sorted = [...of].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
  }

  /** The median round's CPU µs per request: a round slowed by a neighbour's load does not move it. */
  cpuPerRequestUs(): number {
    return median(this.perRound);
  }

  /** "supervisor + worker" µs per request. */
  cpuSplitUs(): string {
    return this.cpuByProcess.map((seconds) => ((seconds / this.requests) * 1e6).toFixed(1)).join(" + ");
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * `side` against `base` as the median of their rounds' ratios: rounds run back to back, so each
 * pair met the same load from the rest of a shared machine, and one disturbed pair moves nothing.
 */
function pairedRatio(side: Side, base: Side, of: (s: Side) => number[] = (s) => s.perRound): number {
  const baseRounds = of(base);
  return median(of(side).map((value, i) => value / baseRounds[i]!));
}

/** Rounds alternate relay, agentd, relay, agentd… with the same payload and concurrency. */
async function interleaved(relay: Side, agentd: Side, payload: string, concurrency: number, perRound: number, rounds: number) {
  for (let i = 0; i < rounds; i++) {
    await relay.round(payload, concurrency, perRound);
    await agentd.round(payload, concurrency, perRound);
  }
}

/**
 * Moves every thread of `pids` onto `cpus` (taskset's list form). False, with a note, where taskset
 * is missing or refuses: the pinned rows are then left out.
 */
function setAffinity(pids: number[], cpus: string): boolean {
  for (const pid of pids) {
    let refusal: string | undefined;
    try {
      const result = Bun.spawnSync(["taskset", "-a", "-p", "-c", cpus, String(pid)], { stdout: "ignore", stderr: "pipe" });
      if (!result.success) refusal = result.stderr.toString().trim();
    } catch (error) {
      refusal = (error as Error).message;
    }
    if (refusal !== undefined) {
      console.error(`bench: cannot pin pid ${pid} with taskset (${refusal}); the one-CPU rows are left out`);
      return false;
    }
  }
  return true;
}

/** The CPUs a process may run on, as /proc lists them (`0-1`), or undefined once it has gone. */
function cpuListOf(pid: number): string | undefined {
  try {
    return /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  } catch {
    return undefined;
  }
}

function workerPid(dataDir: string): number {
  return (JSON.parse(readFileSync(join(dataDir, "ready.json"), "utf8")) as { pid: number }).pid;
}

async function orchestrate(): Promise<void> {
  await ensureBinary();
  const dir = mkdtempSync(join(tmpdir(), "agentd-bench-relay-"));
  const children: Subprocess[] = [];
  const env = { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" };
  const self = (...args: string[]) => {
    const child = Bun.spawn([process.execPath, import.meta.path, ...args], { stdout: "ignore", stderr: "inherit", env });
    children.push(child);
    return child;
  };
  try {
    const upstream = self("--upstream", join(dir, "upstream"));
    const upstreamUrl = `http://127.0.0.1:${await waitForFile(join(dir, "upstream"), upstream)}/v1`;
    const relay = self("--relay", join(dir, "relay"), upstreamUrl);
    const relayUrl = `http://127.0.0.1:${await waitForFile(join(dir, "relay"), relay)}/v1/chat/completions`;

    const providers = [{ name: "bench", base_url: upstreamUrl, api_key: "k" }];
    /** An agentd serving `config`; its supervisor and worker pids and its chat URL. */
    const startAgentd = async (name: string, config: Record<string, unknown>) => {
      const dataDir = join(dir, name);
      const configPath = join(dir, `${name}.jsonc`);
      writeFileSync(configPath, JSON.stringify(config));
      const child = Bun.spawn([AGENTD, "serve", "--config", configPath, "--data-dir", dataDir, "--port", "0", "--bind", "127.0.0.1"], {
        stdout: "ignore",
        stderr: "inherit",
        env,
      });
      children.push(child);
      const ready = await waitForFile(join(dataDir, "ready.json"), child);
      return {
        url: `${(JSON.parse(ready) as { url: string }).url}/v1/chat/completions`,
        pids: () => [child.pid, workerPid(dataDir)],
      };
    };
    const plain = await startAgentd("data", { providers });
    const agentdUrl = plain.url;
    const agentdPids = plain.pids;
    await Bun.sleep(2_000);
    // Before a second agentd starts: PSS splits the pages processes share among them.
    const idle = agentdPids().map(memoryOf);
    const relayIdle = memoryOf(relay.pid);
    // Telemetry on: every request is also a span exported over OTLP/HTTP to a local collector.
    const collector = self("--collector", join(dir, "collector"));
    const collectorUrl = `http://127.0.0.1:${await waitForFile(join(dir, "collector"), collector)}`;
    const traced = await startAgentd("traced", { providers, telemetry: { otlp: { endpoint: collectorUrl } } });

    const sides = () => ({ relay: new Side(relayUrl, () => [relay.pid]), agentd: new Side(agentdUrl, agentdPids) });
    const warm = sides();
    await interleaved(warm.relay, warm.agentd, request(false), 8, 2000, 1);
    await interleaved(warm.relay, warm.agentd, request(true), 8, 500, 1);
    const c1 = sides();
    await interleaved(c1.relay, c1.agentd, request(false), 1, 600, 9);
    const c32 = sides();
    await interleaved(c32.relay, c32.agentd, request(false), 32, 4000, 9);
    const s1 = sides();
    await interleaved(s1.relay, s1.agentd, request(true), 1, 250, 9);
    // The c=1 rows again with every process of the bench on one CPU: each figure then holds to a few
    // per cent run after run, where the free rows above move by half as the scheduler places threads.
    const benchPids = () => [process.pid, ...children.map((child) => child.pid), ...agentdPids(), ...traced.pids()];
    const cpusBefore = benchPids().map((pid) => [pid, cpuListOf(pid)] as const);
    const c1Pinned = sides();
    const s1Pinned = sides();
    let pinned = false;
    try {
      pinned = setAffinity(benchPids(), "0");
      if (pinned) {
        await interleaved(c1Pinned.relay, c1Pinned.agentd, request(false), 1, 600, 9);
        await interleaved(s1Pinned.relay, s1Pinned.agentd, request(true), 1, 250, 9);
      }
    } finally {
      // Each process gets back the CPUs it had, after a failure part-way too.
      for (const [pid, cpus] of cpusBefore) if (cpus) setAffinity([pid], cpus);
    }
    // agentd against itself with telemetry on, c=32.
    const off = new Side(agentdUrl, agentdPids);
    const on = new Side(traced.url, traced.pids);
    // The traced agentd has served nothing yet: bring its JIT to where the other's is, or the row measures warm-up.
    await new Side(traced.url, traced.pids).round(request(false), 32, 30_000);
    await interleaved(new Side(agentdUrl, agentdPids), new Side(traced.url, traced.pids), request(false), 8, 2000, 1);
    await interleaved(off, on, request(false), 32, 4000, 9);

    const us = (v: number) => v.toFixed(1);
    const ms = (v: number) => v.toFixed(3);
    type Pair = { relay: Side; agentd: Side };
    const cpuRow = (label: string, pair: Pair, target: string) => [
      label,
      us(pair.relay.cpuPerRequestUs()),
      us(pair.agentd.cpuPerRequestUs()),
      `×${pairedRatio(pair.agentd, pair.relay).toFixed(2)}`,
      target,
    ];
    const latencyRow = (label: string, pair: Pair, of: (side: Side) => number[], target: string) => {
      const [relayMs, agentdMs] = [pair.relay.p50(of(pair.relay)), pair.agentd.p50(of(pair.agentd))];
      return [label, ms(relayMs), ms(agentdMs), `+${ms(agentdMs - relayMs)} ms`, target];
    };
    const streamed = `CPU per streamed request (${STREAM_CHUNKS} chunks), c=1`;
    const rows: string[][] = [
      cpuRow("CPU per request, c=32 (µs, all its processes)", c32, "≤ ×1.5"),
      ["… agentd's split, c=32 (µs: supervisor + worker)", "", c32.agentd.cpuSplitUs(), "", ""],
      [
        "throughput, c=32 (req/s)",
        median(c32.relay.ratePerRound).toFixed(0),
        median(c32.agentd.ratePerRound).toFixed(0),
        `×${pairedRatio(c32.agentd, c32.relay, (s) => s.ratePerRound).toFixed(2)}`,
        "≥ ×0.7",
      ],
      cpuRow("CPU per request, c=1 (µs)", c1, "≤ ×1.5"),
      latencyRow("p50 latency, c=1 (ms)", c1, (side) => side.ms, "≤ +0.05 ms"),
      cpuRow(`${streamed} (µs)`, s1, "≤ ×1.5"),
      ["… agentd's split, streamed (µs: supervisor + worker)", "", s1.agentd.cpuSplitUs(), "", ""],
      latencyRow("stream TTFB p50, c=1 (ms)", s1, (side) => side.ttfb, "≤ +0.1 ms"),
      ...(pinned
        ? [
            cpuRow("CPU per request, c=1, all on one CPU (µs)", c1Pinned, ""),
            latencyRow("p50 latency, c=1, all on one CPU (ms)", c1Pinned, (side) => side.ms, ""),
            cpuRow(`${streamed}, all on one CPU (µs)`, s1Pinned, ""),
            latencyRow("stream TTFB p50, c=1, all on one CPU (ms)", s1Pinned, (side) => side.ttfb, ""),
          ]
        : []),
      [
        "agentd CPU per request, c=32, telemetry off → on (OTLP export), µs",
        us(off.cpuPerRequestUs()),
        us(on.cpuPerRequestUs()),
        `+${((pairedRatio(on, off) - 1) * 100).toFixed(1)} %`,
        "≤ +10 %",
      ],
      [
        "idle RSS (MB; agentd: supervisor + worker)",
        relayIdle.rss.toFixed(1),
        `${idle[0]!.rss.toFixed(1)} + ${idle[1]!.rss.toFixed(1)}`,
        `${(idle[0]!.rss + idle[1]!.rss).toFixed(1)} MB`,
        "≤ 90 MB",
      ],
      [
        "idle PSS (MB)",
        relayIdle.pss.toFixed(1),
        `${idle[0]!.pss.toFixed(1)} + ${idle[1]!.pss.toFixed(1)}`,
        `${(idle[0]!.pss + idle[1]!.pss).toFixed(1)} MB`,
        "≤ 60 MB",
      ],
    ];
    console.log(
      `\nagentd (compiled, supervisor + worker) vs a bare Bun relay — Bun ${Bun.version}, ${navigator.hardwareConcurrency} cores, loopback, rounds interleaved\n`,
    );
    console.log("| measure | bare relay | agentd | agentd vs relay | target |");
    console.log("| --- | ---: | ---: | ---: | --- |");
    for (const row of rows) console.log(`| ${row.join(" | ")} |`);
  } finally {
    for (const child of children) child.kill();
    await Promise.all(children.map((child) => child.exited));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (role === "--upstream") await runUpstream(process.argv[3]!);
else if (role === "--relay") await runRelay(process.argv[3]!, process.argv[4]!);
else if (role === "--collector") await runCollector(process.argv[3]!);
else await orchestrate();
