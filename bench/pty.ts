/**
 * PTY benchmark: the bun:ffi PTY (PtySession on the shared EpollLoop, as PtyManager runs it)
 * against Bun's built-in PTY (`Bun.spawn` with `terminal`) and a plain pipe, in one run.
 * Run: node_modules/.bin/bun bench/pty.ts — prints a markdown table. Local processes only.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EpollLoop } from "../src/pty/epollLoop.ts";
import { PtySession } from "../src/pty/ptySession.ts";
import { PtyProcess } from "../src/pty/ptyProcess.ts";
import { LocalLauncher } from "../src/pty/commandLauncher.ts";
import { ptyConfigSchema } from "../src/core/config/sections/ptyConfig.ts";
import { createLogger } from "../src/core/log/index.ts";

const FILE_BYTES = 64 * 1024 * 1024;
const THROUGHPUT_ROUNDS = 6;
const ROUND_TRIPS = 2000;
const OPEN_CLOSE_SESSIONS = 100;
const IDLE_SESSIONS = 64;
const DEADLINE_MS = 120_000;

const workDir = mkdtempSync(join(tmpdir(), "agentd-bench-pty-"));
const textFile = join(workDir, "text.txt");
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", TERM: "xterm-256color" };
const loop = new EpollLoop((error) => console.error("poll error", error));
let nextId = 0;

// Commands as agentd's own user, as PtyManager starts them without a command user.
const launcher = new LocalLauncher({
  identity: { mode: "unguarded", problems: [] },
  config: ptyConfigSchema().parse({}),
  logger: createLogger("bench"),
});

async function ffiSession(argv: string[]): Promise<PtySession> {
  const id = `bench-${nextId++}`;
  const spec = { sessionId: id, kind: "command" as const, words: argv, env, cols: 80, rows: 24 };
  return new PtySession({ id, cmd: argv.join(" "), process: await PtyProcess.spawn(spec, launcher), bufferBytes: 1 << 20, loop });
}

async function closeFfi(session: PtySession): Promise<void> {
  await session.terminate(1000);
  session.dispose();
}

function withDeadline<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function ffiCat(): Promise<number> {
  const started = performance.now();
  const session = await ffiSession(["cat", textFile]);
  await withDeadline(
    session.waitUntil(() => !session.running, Date.now() + DEADLINE_MS),
    "FFI cat",
  );
  const seconds = (performance.now() - started) / 1000;
  if (session.bytesOut < FILE_BYTES) throw new Error(`FFI PTY delivered ${session.bytesOut} of ${FILE_BYTES} bytes`);
  session.dispose();
  return session.bytesOut / seconds;
}

async function builtinCat(): Promise<number> {
  let bytes = 0;
  const started = performance.now();
  let ended: () => void = () => {};
  const eof = new Promise<void>((resolve) => (ended = resolve));
  const child = Bun.spawn(["cat", textFile], {
    env,
    terminal: {
      cols: 80,
      rows: 24,
      data: (_t, data) => {
        bytes += data.length;
      },
      exit: () => ended(),
    },
  });
  await withDeadline(Promise.all([child.exited, eof]), "built-in cat");
  const seconds = (performance.now() - started) / 1000;
  child.terminal?.close();
  if (bytes < FILE_BYTES) throw new Error(`built-in PTY delivered ${bytes} of ${FILE_BYTES} bytes`);
  return bytes / seconds;
}

async function pipeCat(): Promise<number> {
  let bytes = 0;
  const started = performance.now();
  const child = Bun.spawn(["cat", textFile], { env, stdout: "pipe" });
  await withDeadline(
    (async () => {
      for await (const chunk of child.stdout) bytes += chunk.length;
      await child.exited;
    })(),
    "pipe cat",
  );
  return bytes / ((performance.now() - started) / 1000);
}

async function ffiRoundTrips(): Promise<number[]> {
  const session = await ffiSession(["cat"]);
  const key = new Uint8Array([0x61]);
  const times: number[] = [];
  try {
    for (let index = 0; index < ROUND_TRIPS; index++) {
      const started = performance.now();
      session.write(key);
      await session.waitUntil(() => session.unreadBytes > 0, Date.now() + 5000);
      if (session.takeOutput().bytes.length === 0) throw new Error("FFI PTY: no echo within 5 s");
      times.push(performance.now() - started);
    }
  } finally {
    await closeFfi(session);
  }
  return times;
}

async function builtinRoundTrips(): Promise<number[]> {
  let echoed: () => void = () => {};
  const child = Bun.spawn(["cat"], { env, terminal: { cols: 80, rows: 24, data: () => echoed() } });
  const terminal = child.terminal!;
  const times: number[] = [];
  try {
    for (let index = 0; index < ROUND_TRIPS; index++) {
      const started = performance.now();
      const echo = new Promise<void>((resolve) => (echoed = resolve));
      terminal.write("a");
      await withDeadline(echo, "built-in echo");
      times.push(performance.now() - started);
    }
  } finally {
    child.kill("SIGHUP");
    await child.exited;
    terminal.close();
  }
  return times;
}

async function ffiOpenClose(): Promise<number> {
  const started = performance.now();
  const sessions = await Promise.all(Array.from({ length: OPEN_CLOSE_SESSIONS }, () => ffiSession(["cat"])));
  await withDeadline(Promise.all(sessions.map(closeFfi)), "FFI open/close");
  return performance.now() - started;
}

async function builtinOpenClose(): Promise<number> {
  const started = performance.now();
  const children = Array.from({ length: OPEN_CLOSE_SESSIONS }, () => Bun.spawn(["cat"], { env, terminal: { cols: 80, rows: 24 } }));
  for (const child of children) child.kill("SIGHUP");
  await withDeadline(Promise.all(children.map((child) => child.exited)), "built-in open/close");
  for (const child of children) child.terminal?.close();
  return performance.now() - started;
}

function rssMb(): number {
  Bun.gc(true);
  return process.memoryUsage().rss / 1024 / 1024;
}

async function idleRss(kind: "ffi" | "builtin"): Promise<{ before: number; after: number }> {
  const before = rssMb();
  if (kind === "ffi") {
    const sessions = await Promise.all(Array.from({ length: IDLE_SESSIONS }, () => ffiSession(["cat"])));
    const after = rssMb();
    await Promise.all(sessions.map(closeFfi));
    return { before, after };
  }
  const children = Array.from({ length: IDLE_SESSIONS }, () =>
    Bun.spawn(["cat"], { env, terminal: { cols: 80, rows: 24, data: () => {} } }),
  );
  const after = rssMb();
  for (const child of children) child.kill("SIGHUP");
  await Promise.all(children.map((child) => child.exited));
  for (const child of children) child.terminal?.close();
  return { before, after };
}

const fmt = (value: number, digits = 1) => value.toFixed(digits);
const signed = (value: number) => `${value >= 0 ? "+" : "−"}${fmt(Math.abs(value))}`;

async function main(): Promise<void> {
  const line = "the quick brown fox jumps over the lazy dog 0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ\n";
  writeFileSync(textFile, line.repeat(Math.ceil(FILE_BYTES / line.length)).slice(0, FILE_BYTES));

  // Rounds interleave the three ways in a rotating order, so a noisy neighbour (or going first)
  // weighs on all of them alike; medians are reported.
  const rates = { ffi: [] as number[], builtin: [] as number[], pipe: [] as number[] };
  const ways = [
    async () => rates.ffi.push(await ffiCat()),
    async () => rates.builtin.push(await builtinCat()),
    async () => rates.pipe.push(await pipeCat()),
  ];
  for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
    for (let step = 0; step < ways.length; step++) await ways[(round + step) % ways.length]!();
  }
  const ffiRate = median(rates.ffi) / 1e6;
  const builtinRate = median(rates.builtin) / 1e6;
  const pipeRate = median(rates.pipe) / 1e6;

  const ffiTrips = await ffiRoundTrips();
  const builtinTrips = await builtinRoundTrips();
  const ffiOpen = await ffiOpenClose();
  const builtinOpen = await builtinOpenClose();
  const ffiRss = await idleRss("ffi");
  const builtinRss = await idleRss("builtin");

  const rows: string[][] = [
    ["measure", "FFI PTY", "built-in PTY", "pipe", "FFI ÷ built-in", "target"],
    [
      `cat ${FILE_BYTES / 1024 / 1024} MB, MB/s (median of ${THROUGHPUT_ROUNDS})`,
      fmt(ffiRate),
      fmt(builtinRate),
      fmt(pipeRate),
      `${fmt(ffiRate / builtinRate, 2)}× (FFI ÷ pipe ${fmt(ffiRate / pipeRate, 2)}×)`,
      "≥ 1.0×",
    ],
    [
      `keystroke round trip p50, ms (${ROUND_TRIPS})`,
      fmt(percentile(ffiTrips, 50), 3),
      fmt(percentile(builtinTrips, 50), 3),
      "–",
      `${fmt(percentile(ffiTrips, 50) / percentile(builtinTrips, 50), 2)}×`,
      "≤ 0.1 ms",
    ],
    [
      `keystroke round trip p99, ms (${ROUND_TRIPS})`,
      fmt(percentile(ffiTrips, 99), 3),
      fmt(percentile(builtinTrips, 99), 3),
      "–",
      `${fmt(percentile(ffiTrips, 99) / percentile(builtinTrips, 99), 2)}×`,
      "≤ 1 ms",
    ],
    [
      `open + close ${OPEN_CLOSE_SESSIONS} sessions, ms`,
      fmt(ffiOpen),
      fmt(builtinOpen),
      "–",
      `${fmt(ffiOpen / builtinOpen, 2)}×`,
      "≤ 1000 ms",
    ],
    // RSS moves by a few MB with the GC on its own, so the growth is shown as a signed difference, not a ratio.
    [
      `RSS with ${IDLE_SESSIONS} idle sessions, MB (change over before)`,
      `${fmt(ffiRss.after)} (${signed(ffiRss.after - ffiRss.before)})`,
      `${fmt(builtinRss.after)} (${signed(builtinRss.after - builtinRss.before)})`,
      "–",
      `${fmt(ffiRss.after / builtinRss.after, 2)}× RSS`,
      "–",
    ],
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const render = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column]!)).join(" | ")} |`;
  console.log(render(rows[0]!));
  console.log(`|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`);
  for (const row of rows.slice(1)) console.log(render(row));
}

try {
  await main();
} finally {
  loop.close();
  rmSync(workDir, { recursive: true, force: true });
}
