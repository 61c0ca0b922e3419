/**
 * The status page under a realistic store: 10,000 incidents (1,000 of them unresolved) and 1,000
 * agent sessions. The app (createApp with the page's own status source, as the worker composes it)
 * runs in a child process so the client's timers do not share its event loop. Measured:
 *   - /status as HTML, text and JSON: latency p50/p99 over 500 sequential requests, and bytes
 *   - the HTML render alone (snapshot → string), in the child, over the same 500
 *   - /health under 200 concurrent requests
 * each beside /livez measured the same way in the same run (interleaved by phase). Client-side
 * latency under 200 concurrent requests is mostly queueing on a small machine, so the child also
 * times each request inside the server (handler start to response ready) and reports that too.
 *
 *   node_modules/.bin/bun bench/status.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentMigrations } from "../src/agent/agentMigrations.ts";
import { baseMigrations, openStore, probeStoreWritable } from "../src/core/store/index.ts";
import { IncidentStore } from "../src/watchdog/index.ts";
import { createLogger } from "../src/core/log/index.ts";
import { createApp } from "../src/http/app.ts";
import { renderStatusHtml } from "../src/status/statusHtml.tsx";
import { healthDocument } from "../src/http/probeRoutes.ts";
import type { SessionRow } from "../src/status/statusSnapshot.ts";
import { createStatusSource } from "../src/status/statusSource.ts";
import { statusPageMounts } from "../src/status/statusMounts.ts";
import { BUN } from "../tests/support/binary.ts";

const INCIDENTS = 10_000;
const UNRESOLVED = 1_000;
const SESSIONS = 1_000;
const SEQUENTIAL = 500;
const CONCURRENCY = 200;
const CONCURRENT_ROUNDS = 10;

if (process.argv[2] === "--serve") await serve(process.argv[3]!);
else await measure();

/** The child: seeds the store, serves the app on a free port, answers "render" on stdin for the pure render timing. */
async function serve(dir: string): Promise<void> {
  const db = openStore({ path: join(dir, "agentd.db"), migrations: [...baseMigrations, ...agentMigrations] });
  const now = Date.now();
  const insertIncident = db.prepare(
    "INSERT INTO incidents (dedup_key, title, category, severity, state, first_seen, last_seen, count, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertSession = db.prepare(
    "INSERT INTO agent_sessions (id, created_at, updated_at, model, target, title, state) VALUES (?, ?, ?, ?, 'local', ?, ?)",
  );
  db.transaction(() => {
    for (let i = 0; i < INCIDENTS; i++) {
      const state = i < UNRESOLVED ? (i % 3 === 0 ? "acknowledged" : "open") : "resolved";
      insertIncident.run(
        `bench-${i}`,
        `upstream 502 from provider-${i % 7} while streaming <chunk ${i}>`,
        "upstream",
        "error",
        state,
        now - (INCIDENTS - i) * 60_000,
        now - (INCIDENTS - i) * 1_000,
        1 + (i % 40),
        JSON.stringify({ reason: "x".repeat(200) }),
      );
    }
    for (let i = 0; i < SESSIONS; i++)
      insertSession.run(
        `ses_${i}`,
        now - i * 5_000,
        now - i * 1_000,
        "gpt-4o-mini",
        `fix nginx config on web-${i}`,
        i % 10 === 0 ? "running" : "idle",
      );
  })();
  const sessionCount = db.query<{ n: number }, []>("SELECT count(*) AS n FROM agent_sessions");
  const sessionPage = db.query<SessionRow & { created_at: number; updated_at: number }, [number, number]>(
    "SELECT id, target, model, state, title, created_at AS started_at, updated_at AS last_activity, created_at, updated_at FROM agent_sessions ORDER BY updated_at DESC LIMIT ? OFFSET ?",
  );
  const startedAt = Date.now();
  const probes = {
    version: "bench",
    startedAt,
    notes: () => [],
    readiness: () => [],
    // As the worker's: /health writes to the store on every call.
    healthSources: {
      store: () => {
        probeStoreWritable(db);
        return [{ key: "store:writable", status: "pass" as const, observedValue: true }];
      },
      process: () => [
        {
          key: "worker:memory",
          status: "pass" as const,
          observedValue: Math.round(process.memoryUsage.rss() / 1048576),
          observedUnit: "MiB",
        },
      ],
    },
  };
  const status = createStatusSource({
    health: () => healthDocument({ ...probes, requestsTotal: () => requests.total }),
    worker: () => ({
      pid: process.pid,
      supervisor_pid: null,
      version: "bench",
      uptime_s: Math.round((Date.now() - startedAt) / 1000),
      restarts: 0,
      memory_mb: Math.round(process.memoryUsage.rss() / 104857.6) / 10,
    }),
    incidents: new IncidentStore(db),
    sessions: (page) => ({
      total: sessionCount.get()!.n,
      rows: sessionPage
        .all(page.limit, page.offset)
        .map(({ created_at: _c, updated_at: _u, ...row }) => ({ ...row, title: row.title ?? undefined })),
    }),
  });
  const { app, requests } = createApp({
    ...probes,
    logger: createLogger("bench"),
    bodyLimitBytes: 1 << 20,
    metricFamilies: () => [],
    mounts: statusPageMounts(status, {}).mounts,
  });
  const handlerTimes: Record<string, number[]> = {};
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const start = performance.now();
      const response = await app.fetch(request);
      const key = `${new URL(request.url).pathname} ${request.headers.get("accept") ?? ""}`;
      let times = handlerTimes[key];
      if (times == null) {
        times = [];
        handlerTimes[key] = times;
      }
      times.push(performance.now() - start);
      return response;
    },
  });
  process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
  for await (const line of console) {
    if (line.trim() !== "render") break;
    const times: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      const snapshot = await status.snapshot();
      const start = performance.now();
      renderStatusHtml(snapshot);
      times.push(performance.now() - start);
    }
    process.stdout.write(`${JSON.stringify({ render: times, handler: handlerTimes })}\n`);
  }
  server.stop(true);
  db.close();
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function timed(url: string, headers: Record<string, string> = {}): Promise<{ ms: number; bytes: number }> {
  const start = performance.now();
  const response = await fetch(url, { headers });
  const body = await response.arrayBuffer();
  const ms = performance.now() - start;
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return { ms, bytes: body.byteLength };
}

async function sequential(url: string, headers: Record<string, string> = {}): Promise<{ times: number[]; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < SEQUENTIAL; i++) {
    const result = await timed(url, headers);
    times.push(result.ms);
    bytes = result.bytes;
  }
  return { times, bytes };
}

async function concurrent(url: string): Promise<number[]> {
  const times: number[] = [];
  for (let round = 0; round < CONCURRENT_ROUNDS; round++) {
    const results = await Promise.all(Array.from({ length: CONCURRENCY }, () => timed(url)));
    times.push(...results.map((r) => r.ms));
  }
  return times;
}

async function measure(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "agentd-bench-status-"));
  const child = Bun.spawn([BUN, import.meta.path, "--serve", dir], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  try {
    const lines = readLines(child.stdout);
    const { port } = JSON.parse(await lines.next()) as { port: number };
    const base = `http://127.0.0.1:${port}`;
    // Warm up both paths (JIT, SQLite page cache) before anything is counted.
    for (let i = 0; i < 50; i++) await Promise.all([timed(`${base}/status`, { accept: "text/html" }), timed(`${base}/livez`)]);

    const livezSeq = await sequential(`${base}/livez`);
    const html = await sequential(`${base}/status`, { accept: "text/html" });
    const text = await sequential(`${base}/status`, { accept: "*/*" });
    const json = await sequential(`${base}/status`, { accept: "application/json" });
    const livezSeq2 = await sequential(`${base}/livez`);
    const livezConc = await concurrent(`${base}/livez`);
    const health = await concurrent(`${base}/health`);
    const livezConc2 = await concurrent(`${base}/livez`);
    child.stdin.write("render\n");
    await child.stdin.flush();
    const { render, handler } = JSON.parse(await lines.next()) as { render: number[]; handler: Record<string, number[]> };
    const inServer = (key: string) => handler[key] ?? [];

    const seqBase = [...livezSeq.times, ...livezSeq2.times];
    const concBase = [...livezConc, ...livezConc2];
    const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
    const ratio = (ms: number, baseline: number) => `${(ms / baseline).toFixed(1)}×`;
    const serverRow = (label: string, key: string, baseKey: string): string[] => {
      const times = inServer(key);
      return [
        label,
        fmt(percentile(times, 50)),
        fmt(percentile(times, 99)),
        ratio(percentile(times, 99), percentile(inServer(baseKey), 99)),
        "",
        "",
      ];
    };
    const rows: string[][] = [
      ["`/livez` (baseline, sequential)", fmt(percentile(seqBase, 50)), fmt(percentile(seqBase, 99)), "1.0×", `${livezSeq.bytes} B`, ""],
      [
        "`/status` HTML",
        fmt(percentile(html.times, 50)),
        fmt(percentile(html.times, 99)),
        ratio(percentile(html.times, 99), percentile(seqBase, 99)),
        `${(html.bytes / 1024).toFixed(1)} KB`,
        "p99 ≤ 25 ms, ≤ 150 KB",
      ],
      [
        "`/status` text",
        fmt(percentile(text.times, 50)),
        fmt(percentile(text.times, 99)),
        ratio(percentile(text.times, 99), percentile(seqBase, 99)),
        `${(text.bytes / 1024).toFixed(1)} KB`,
        "p99 ≤ 25 ms",
      ],
      [
        "`/status` JSON",
        fmt(percentile(json.times, 50)),
        fmt(percentile(json.times, 99)),
        ratio(percentile(json.times, 99), percentile(seqBase, 99)),
        `${(json.bytes / 1024).toFixed(1)} KB`,
        "",
      ],
      ["HTML render only (in process)", fmt(percentile(render, 50)), fmt(percentile(render, 99)), "", "", ""],
      [`\`/livez\` (baseline, ${CONCURRENCY} concurrent)`, fmt(percentile(concBase, 50)), fmt(percentile(concBase, 99)), "1.0×", "", ""],
      [
        `\`/health\` (${CONCURRENCY} concurrent)`,
        fmt(percentile(health, 50)),
        fmt(percentile(health, 99)),
        ratio(percentile(health, 99), percentile(concBase, 99)),
        "",
        "p99 ≤ 5 ms",
      ],
      serverRow("in server: `/livez` (baseline)", "/livez */*", "/livez */*"),
      serverRow("in server: `/status` HTML", "/status text/html", "/livez */*"),
      serverRow("in server: `/status` text", "/status */*", "/livez */*"),
      serverRow("in server: `/health`", "/health */*", "/livez */*"),
    ];
    const out = [
      `Store: ${INCIDENTS} incidents (${UNRESOLVED} unresolved), ${SESSIONS} agent sessions. ${SEQUENTIAL} sequential requests per /status row; ${CONCURRENT_ROUNDS} rounds of ${CONCURRENCY} concurrent for the concurrent rows. Ratio: p99 against the baseline's p99.`,
      "",
      "| measure | p50 | p99 | p99 vs baseline | bytes | target |",
      "| --- | ---: | ---: | ---: | ---: | --- |",
      ...rows.map((row) => `| ${row.join(" | ")} |`),
      "",
    ];
    process.stdout.write(out.join("\n"));
  } finally {
    child.stdin.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await child.exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Line reader over the child's stdout. */
function readLines(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return {
    async next(): Promise<string> {
      for (;;) {
        const newline = buffer.indexOf("\n");
        if (newline >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          return line;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("the bench server exited early");
        buffer += decoder.decode(value, { stream: true });
      }
    },
  };
}
