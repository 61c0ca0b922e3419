/**
 * Records the profiles `npm run build` lays the binary's bytecode out by (`--bytecode-order`): Bun
 * puts the functions a recorded run used together at the front, so a process maps a few dense
 * pages of bytecode instead of touching most of them (idle RSS of each process ~5 MB lower).
 *
 *   node_modules/.bin/bun build/recordBytecodeOrder.ts     (as root, it records the split as deployed)
 *
 * A run of the binary with BUN_BYTECODE_ORDER_OUT set writes the functions it used when it exits:
 * every process of `agentd serve` does, to the same path (the config child at start, then the
 * worker, then the supervisor), so each is copied as soon as its process is gone. What a profile
 * misses (code changed since, paths the idle run never took) only lies further back: a stale
 * profile costs memory, never correctness. Re-record after large changes to what starts.
 */
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ensureBinary } from "../tests/support/binary.ts";

const OUT_DIR = resolve(import.meta.dir, "bytecode-order");
const IDLE_MS = 2_000;
const STEP_TIMEOUT_MS = 30_000;

const binary = await ensureBinary();
// The worker runs as the service user when started as root: it must be able to replace the file.
const work = mkdtempSync(join(tmpdir(), "agentd-bytecode-order-"));
chmodSync(work, 0o777);
const profile = join(work, "order.txt");
const dataDir = join(work, "data");

/** The daemon's log: `until(event)` reads its stdout up to the next line of that event. */
function logReader(stdout: ReadableStream<Uint8Array>) {
  const lines = stdout.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  return async (event: string): Promise<void> => {
    for (;;) {
      for (let newline = pending.indexOf("\n"); newline >= 0; newline = pending.indexOf("\n")) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line.includes(`"event":"${event}"`)) return;
      }
      const { value, done } = await lines.read();
      if (done) throw new Error(`record: the daemon exited before ${event}`);
      pending += value;
    }
  };
}

async function within<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`record: no ${what} within ${STEP_TIMEOUT_MS} ms`)), STEP_TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function keep(name: string): void {
  if (!existsSync(profile) || statSync(profile).size === 0) throw new Error(`record: the ${name} wrote no profile at ${profile}`);
  copyFileSync(profile, join(OUT_DIR, `${name}.txt`));
  const entries = readFileSync(profile, "utf8").split("\n").length - 2;
  process.stdout.write(`${name}: ${entries} entries → build/bytecode-order/${name}.txt\n`);
}

const daemon = Bun.spawn([binary, "serve", "--port", "0", "--data-dir", dataDir], {
  cwd: work,
  env: { ...process.env, BUN_BYTECODE_ORDER_OUT: profile },
  stdin: "ignore",
  stdout: "pipe",
  stderr: "inherit",
});
try {
  const until = logReader(daemon.stdout);
  await within("http.listening", until("http.listening"));
  await Bun.sleep(IDLE_MS);
  const ready = JSON.parse(readFileSync(join(dataDir, "ready.json"), "utf8")) as { pid: number };
  // The supervisor starts a new worker at once; the stopped one has written its profile by then.
  process.kill(ready.pid, "SIGTERM");
  await within("worker.exit", until("worker.exit"));
  keep("worker");
  // The supervisor stops the worker it started meanwhile (which writes again), then writes its own, last.
  daemon.kill("SIGTERM");
  await within("the supervisor's exit", daemon.exited);
  keep("supervisor");
} finally {
  if (daemon.exitCode === null) daemon.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
}
