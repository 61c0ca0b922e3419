/**
 * The load client's side of the proxy benches: a Side is one server under load (the relay or an
 * agentd) with what its rounds measured; rounds of several sides alternate, so load from the rest
 * of a shared machine falls on all alike, and ratios are taken round by round.
 */
import { readdirSync, readFileSync } from "node:fs";

/** One thread's name and the CPU seconds it has run. */
interface ThreadCpu {
  name: string;
  seconds: number;
}

/**
 * CPU seconds each of a process's threads has run, by thread id, to the nanosecond (schedstat):
 * /proc/PID/stat counts in 10 ms ticks, too coarse for a round of a few hundred requests.
 */
export function threadCpuSeconds(pid: number): Map<string, ThreadCpu> {
  const byThread = new Map<string, ThreadCpu>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${task}/comm`, "utf8").trim();
      byThread.set(task, { name, seconds: Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]) / 1e9 });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return byThread;
}

/** JavaScriptCore's compiler threads (JITWorker): what they run is code being compiled, not requests served. */
const isJitThread = (name: string) => name.startsWith("JIT");

/**
 * CPU seconds a process's threads ran between two readings: thread by thread, so a thread that
 * ended meanwhile does not take all it ever ran with it (a sum over live threads went negative
 * then). What such a thread ran within the span is not seen: a slight undercount.
 */
export function cpuSecondsBetween(
  before: Map<string, ThreadCpu>,
  after: Map<string, ThreadCpu>,
  only: (threadName: string) => boolean = () => true,
): number {
  let spent = 0;
  for (const [thread, { name, seconds }] of after) if (only(name)) spent += seconds - (before.get(thread)?.seconds ?? 0);
  return spent;
}

/** A chat request to the bench upstream; `gapMs` asks it to space a stream's events that far apart (benchServers.ts). */
export const request = (stream: boolean, gapMs?: number) =>
  JSON.stringify({
    model: "bench",
    stream,
    messages: [{ role: "user", content: "hi" }],
    ...(stream ? { stream_options: { include_usage: true } } : {}),
    ...(gapMs ? { bench_gap_ms: gapMs } : {}),
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

export class Side {
  readonly ms: number[] = [];
  readonly ttfb: number[] = [];
  requests = 0;
  /** CPU seconds by process, in the order pids() lists them (agentd: supervisor, worker). */
  readonly cpuByProcess: number[] = [];
  /** CPU µs per request of each round, in order: paired with the other side's rounds. */
  readonly perRound: number[] = [];
  /** Requests per second of each round, in order. */
  readonly ratePerRound: number[] = [];
  /** CPU µs per request the JIT compiler threads ran in each round (within perRound): near 0 once warm. */
  readonly jitPerRound: number[] = [];

  constructor(
    readonly url: string,
    readonly pids: () => number[],
  ) {}

  async round(payload: string, concurrency: number, count: number): Promise<void> {
    const pids = this.pids();
    const before = pids.map(threadCpuSeconds);
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
    let jit = 0;
    pids.forEach((pid, i) => {
      const after = threadCpuSeconds(pid);
      const spent = cpuSecondsBetween(before[i]!, after);
      round += spent;
      jit += cpuSecondsBetween(before[i]!, after, isJitThread);
      this.cpuByProcess[i] = (this.cpuByProcess[i] ?? 0) + spent;
    });
    this.perRound.push((round / count) * 1e6);
    this.jitPerRound.push((jit / count) * 1e6);
  }

  p50(of: number[]): number {
    const sorted = [...of].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
  }

  /** The median round's CPU µs per request: a round slowed by a neighbour's load does not move it. */
  cpuPerRequestUs(): number {
    return median(this.perRound);
  }

  /** The JIT compiler threads' share of the CPU in the median round by that measure: past a per cent or two, the side was still warming up. */
  jitShare(): number {
    return median(this.jitPerRound.map((jit, i) => jit / this.perRound[i]!));
  }

  /** "supervisor + worker" µs per request. */
  cpuSplitUs(): string {
    return this.cpuByProcess.map((seconds) => ((seconds / this.requests) * 1e6).toFixed(1)).join(" + ");
  }
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * `side` against `base` as the median of their rounds' ratios: rounds run back to back, so each
 * pair met the same load from the rest of a shared machine, and one disturbed pair moves nothing.
 */
export function pairedRatio(side: Side, base: Side, of: (s: Side) => number[] = (s) => s.perRound): number {
  const baseRounds = of(base);
  return median(of(side).map((value, i) => value / baseRounds[i]!));
}

/**
 * Rounds alternate between the sides with the same payload and concurrency, each round starting one
 * side further on (relay, agentd; agentd, relay…), so every side takes every place in turn: a
 * side's place moved its figure. One binary as both A and B in bench/compare.ts read B/A ×0.920 at
 * c=32 with B always after A, and ×0.95–×1.04 in seven runs with the order turning.
 */
export async function interleaved(sides: readonly Side[], payload: string, concurrency: number, perRound: number, rounds: number) {
  for (let i = 0; i < rounds; i++)
    for (let j = 0; j < sides.length; j++) await sides[(i + j) % sides.length]!.round(payload, concurrency, perRound);
}

/** One load shape: `gapMs` spaces a stream's events that far apart (benchServers.ts). */
export interface Row {
  label: string;
  stream: boolean;
  concurrency: number;
  perRound: number;
  gapMs?: number;
}

/** The load shapes the proxy benches compare sides under. */
export const ROWS = {
  c32: { label: "c=32", stream: false, concurrency: 32, perRound: 4000 },
  c1: { label: "c=1", stream: false, concurrency: 1, perRound: 600 },
  stream: { label: "streamed (20 events), c=1", stream: true, concurrency: 1, perRound: 250 },
  // A model's tokens come apart: each event is a read and a write of its own, where the row above
  // gets its 20 in one read.
  spaced: { label: "streamed (20 events 1 ms apart), c=4", stream: true, concurrency: 4, perRound: 120, gapMs: 1 },
} as const satisfies Record<string, Row>;

/**
 * Brings every side to its steady state with both answer shapes: JavaScriptCore compiles hot code
 * in tiers as it runs, and agentd's code is big enough that its compiler threads were still busy
 * after 12,000 streamed requests (a streamed request cost up to about twice its steady figure until then;
 * non-streamed ones settled after about 16,000). A relay has little to compile: the same requests
 * change nothing for it. Side.jitShare() tells whether the measured rounds were past it.
 */
export async function warmUp(sides: readonly Side[]): Promise<void> {
  await interleaved(sides, request(false), 32, 30_000, 1);
  await interleaved(sides, request(true), 8, 15_000, 1);
}

/**
 * Warms every side (warmUp), then runs each row's rounds on fresh sides from `sides()`: the
 * measured sides, row by row.
 */
export async function measureRows(sides: () => Side[], rows: readonly Row[], rounds: number): Promise<Side[][]> {
  await warmUp(sides());
  const measured: Side[][] = [];
  for (const row of rows) {
    const rowSides = sides();
    await interleaved(rowSides, request(row.stream, row.gapMs), row.concurrency, row.perRound, rounds);
    measured.push(rowSides);
  }
  return measured;
}
