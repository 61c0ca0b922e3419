/**
 * Watchdog benchmark: `node_modules/.bin/bun bench/watchdog.ts` (needs ./agentd: `npm run build`).
 * Prints a Markdown table. Every figure is set against a baseline or bound measured in the same run.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readLines } from "../src/core/log/index.ts";
import { BUILTIN_SIGNATURES } from "../src/watchdog/checks/signatureCatalog.ts";
import { SignatureMatcher } from "../src/watchdog/checks/signatureMatcher.ts";
import { signatureConfigSchema } from "../src/core/config/sections/watchdogConfig.ts";

const BINARY = resolve(import.meta.dir, "../agentd");
const CLOCK_TICKS = 100;

interface Running {
  proc: ReturnType<typeof Bun.spawn>;
  dir: string;
  lines: Array<Record<string, unknown>>;
  spawnedAt: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function until<T>(probe: () => T | undefined | Promise<T | undefined>, deadlineMs = 60_000): Promise<T> {
  const deadline = performance.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error("benchmark step timed out");
    await Bun.sleep(2);
  }
}

function start(watchdog: Record<string, unknown>, supervisor: Record<string, unknown> = {}): Running {
  const dir = mkdtempSync(join(tmpdir(), "agentd-bench-wd-"));
  writeFileSync(join(dir, "agentd.jsonc"), JSON.stringify({ watchdog, supervisor }));
  const spawnedAt = performance.now();
  const proc = Bun.spawn([BINARY, "serve", "--port", "0", "--config", join(dir, "agentd.jsonc"), "--data-dir", dir], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "ignore",
  });
  const lines: Array<Record<string, unknown>> = [];
  void readLines(proc.stdout as ReadableStream<Uint8Array>, (line) => {
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a log line
    }
  });
  return { proc, dir, lines, spawnedAt };
}

async function stop(running: Running): Promise<void> {
  running.proc.kill("SIGTERM");
  await running.proc.exited;
  rmSync(running.dir, { recursive: true, force: true });
}

async function livez(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/livez`, { signal: AbortSignal.timeout(500) })).status === 200;
  } catch {
    return false;
  }
}

const lastLine = (r: Running, event: string, after = 0) => r.lines.slice(after).find((l) => l.event === event);

async function coldStartMs(): Promise<number> {
  const running = start({});
  const listening = await until(() => lastLine(running, "http.listening"));
  await until(async () => ((await livez(listening.url as string)) ? true : undefined));
  const ms = performance.now() - running.spawnedAt;
  await stop(running);
  return ms;
}

async function recoveryTimes(rounds: number): Promise<number[]> {
  // A worker up for healthy_reset_s is restarted at once: each round measures a lone crash's recovery.
  const running = start({ resolve_after_s: 1, verify_window_s: 1 }, { restart_max: 50, healthy_reset_s: 1 });
  const times: number[] = [];
  let listening = await until(() => lastLine(running, "http.listening"));
  for (let i = 0; i < rounds; i++) {
    await until(async () => ((await livez(listening.url as string)) ? true : undefined));
    const pid = (running.lines.filter((l) => l.event === "worker.spawned").at(-1)!.pid as number)!;
    const mark = running.lines.length;
    const killedAt = performance.now();
    process.kill(pid, "SIGKILL");
    listening = await until(() => lastLine(running, "http.listening", mark));
    await until(async () => ((await livez(listening.url as string)) ? true : undefined));
    times.push(performance.now() - killedAt);
    await Bun.sleep(1100);
  }
  await stop(running);
  return times;
}

async function hangDetection(probe: { interval_ms: number; timeout_ms: number; failure_threshold: number }): Promise<number> {
  const running = start({ probe, restart_grace_ms: 500 });
  await until(() => lastLine(running, "http.listening"));
  await until(() => running.lines.find((l) => l.event === "worker.spawned"));
  await Bun.sleep(probe.interval_ms * 2);
  const pid = running.lines.find((l) => l.event === "worker.spawned")!.pid as number;
  const mark = running.lines.length;
  const stoppedAt = performance.now();
  process.kill(pid, "SIGSTOP");
  await until(() => running.lines.slice(mark).find((l) => l.event === "watchdog.action" && l.action === "restart_worker"));
  const ms = performance.now() - stoppedAt;
  await until(() => lastLine(running, "http.listening", mark));
  await stop(running);
  return ms;
}

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

async function idleCpuShare(seconds: number): Promise<number> {
  const running = start({});
  await until(() => lastLine(running, "http.listening"));
  await Bun.sleep(2000);
  const before = cpuTicks(running.proc.pid);
  const t0 = performance.now();
  await Bun.sleep(seconds * 1000);
  const ticks = cpuTicks(running.proc.pid) - before;
  const elapsed = (performance.now() - t0) / 1000;
  await stop(running);
  return ticks / CLOCK_TICKS / elapsed;
}

function matchingThroughput(): { signatures: number; linesPerSecond: number; matched: number } {
  const extra = Array.from({ length: 100 - BUILTIN_SIGNATURES.length }, (_, i) =>
    signatureConfigSchema().parse(
      i % 2 === 0
        ? { id: `user.event_${i}`, title: `user event ${i}`, category: "client", event: `app.event_${i}`, fields: { result: "failed" } }
        : { id: `user.text_${i}`, title: `user text ${i}`, category: "daemon", regex: `fatal condition ${i}\\b` },
    ),
  );
  const matcher = new SignatureMatcher([...extra, ...BUILTIN_SIGNATURES]);
  const ts = new Date().toISOString();
  const sample = [
    ...Array.from({ length: 90 }, (_, i) =>
      JSON.stringify({
        ts,
        level: "info",
        component: "proxy",
        event: "proxy.request",
        provider: "openai",
        model: "gpt-4o-mini",
        status: 200,
        duration_ms: 100 + i,
        tokens_in: 420,
        tokens_out: 80,
      }),
    ),
    ...Array.from({ length: 4 }, () =>
      JSON.stringify({
        ts,
        level: "warn",
        component: "proxy",
        event: "upstream.error",
        provider: "openai",
        status: 500,
        cause: "http_5xx",
        attempt: 1,
        message: "upstream answered 500",
      }),
    ),
    ...Array.from({ length: 3 }, (_, i) =>
      JSON.stringify({
        ts,
        level: "info",
        component: "agent",
        event: "tool.end",
        tool: "exec_command",
        outcome: i === 0 ? "error" : "ok",
        duration_ms: 20,
      }),
    ),
    ...Array.from({ length: 3 }, (_, i) => `2030/01/01 12:00:0${i} [notice] worker process ${i} exited normally`),
  ];
  const total = 1_000_000;
  let matched = 0;
  for (let i = 0; i < 20_000; i++) matcher.match(sample[i % sample.length]!, 0);
  const t0 = performance.now();
  for (let i = 0; i < total; i++) if (matcher.match(sample[i % sample.length]!, 0)) matched++;
  const seconds = (performance.now() - t0) / 1000;
  return { signatures: matcher.size, linesPerSecond: total / seconds, matched };
}

const rows: string[][] = [];
const throughput = matchingThroughput();
rows.push([
  "signature matching",
  `${Math.round(throughput.linesPerSecond).toLocaleString("en-US")} lines/s (${throughput.signatures} signatures, ${throughput.matched.toLocaleString("en-US")} of 1,000,000 lines matched)`,
  "≥ 200,000 lines/s",
  `${(throughput.linesPerSecond / 200_000).toFixed(1)}× target`,
]);

const colds: number[] = [];
for (let i = 0; i < 5; i++) colds.push(await coldStartMs());
const cold = median(colds);
const recoveries = await recoveryTimes(10);
const recovery = median(recoveries);
rows.push(["cold start of `serve` (spawn → first 200 on /livez)", `${cold.toFixed(0)} ms (median of 5)`, "baseline", "1.00×"]);
rows.push([
  "recovery after kill -9 of the worker (→ first 200 on /livez)",
  `${recovery.toFixed(0)} ms (median of 10; min ${Math.min(...recoveries).toFixed(0)}, max ${Math.max(...recoveries).toFixed(0)})`,
  "≤ 1.5× cold start; < 240 ms",
  `${(recovery / cold).toFixed(2)}× cold start`,
]);

const probe = { interval_ms: 500, timeout_ms: 500, failure_threshold: 3 };
const bound = probe.interval_ms * probe.failure_threshold + probe.timeout_ms;
const detections: number[] = [];
for (let i = 0; i < 3; i++) detections.push(await hangDetection(probe));
const detection = median(detections);
rows.push([
  `hung worker detection (SIGSTOP; interval ${probe.interval_ms} ms × ${probe.failure_threshold} + timeout ${probe.timeout_ms} ms)`,
  `${detection.toFixed(0)} ms (median of 3)`,
  `≤ ${bound} ms bound`,
  `${(detection / bound).toFixed(2)}× bound`,
]);

const idle = await idleCpuShare(20);
rows.push([
  "supervisor CPU while idle (default probes, 20 s)",
  `${(idle * 100).toFixed(2)} % of a core`,
  "≤ 1 %",
  idle <= 0.01 ? "within target" : "over target",
]);

console.log("| measure | result | target / baseline | ratio |");
console.log("| --- | --- | --- | --- |");
for (const row of rows) console.log(`| ${row.join(" | ")} |`);
