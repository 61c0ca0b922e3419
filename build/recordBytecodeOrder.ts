/**
 * Records the profiles `npm run build` lays the binary's bytecode out by (`--bytecode-order`): Bun
 * puts the functions a recorded run used together at the front, so a process maps a few dense
 * pages of bytecode instead of touching most of them.
 *
 *   node_modules/.bin/bun build/recordBytecodeOrder.ts     (as root, as deployed: the split worker)
 *
 * Two runs: `agentd serve` starts without a config file and idles (worker.txt, supervisor.txt); then
 * one with a hops config opens a hop to a loopback OpenSSH server and closes it (hop.txt, listed
 * last: the hop's code and ssh2 lie after what an idle process uses, and a hop pages them in dense).
 * A process of the binary with BUN_BYTECODE_ORDER_OUT set writes the functions it used when it
 * exits; every process of `agentd serve` writes the same path (the config child at start, the
 * worker, the supervisor), so each is copied as soon as its process is gone. What a profile misses
 * (code changed since, paths the run never took) only lies further back: a stale profile costs
 * memory, never correctness. Re-record after large changes to what starts.
 */
import { chmodSync, chownSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ensureBinary } from "../tests/support/binary.ts";
import { startSshd } from "../tests/support/sshd.ts";
import { makeTempDir, removeTempDirs } from "../tests/support/tempDir.ts";

const OUT_DIR = resolve(import.meta.dir, "bytecode-order");
const IDLE_MS = 2_000;
const STEP_TIMEOUT_MS = 60_000;

const binary = await ensureBinary();
// The worker runs as the service user when started as root: it must be able to replace the
// profile and to read the hop's key.
const work = mkdtempSync(join(tmpdir(), "agentd-bytecode-order-"));
chmodSync(work, 0o777);
const profile = join(work, "order.txt");
const sshd = await startSshd({ env: { HOME: makeTempDir("agentd-bytecode-order-remote-") } });
const key = join(work, "id");
copyFileSync(sshd.clientKeyPath, key);
chmodSync(key, 0o600);
// Not agentd.jsonc: the idle run, started without --config in this directory, would find it.
const configPath = join(work, "hop.jsonc");
writeFileSync(
  configPath,
  JSON.stringify({
    hops: { known_hosts: join(work, "known_hosts"), identity_files: [key], use_agent: false, remote_dir: "~/.agentd-order" },
  }),
);

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

/** Opens one hop through the worker's API and closes it again, stopping the remote agentd. */
async function hopOnce(url: string, workerPid: number): Promise<void> {
  const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${workerPid}/status`, "utf8"))?.[1]);
  if (uid !== process.getuid?.()) chownSync(key, uid, -1);
  const response = await fetch(`${url}/api/hops`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ destination: `${sshd.user}@127.0.0.1:${sshd.port}`, accept_new: true, name: "order" }),
  });
  if (response.status !== 201) throw new Error(`record: the hop did not open: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
  const closed = await fetch(`${url}/api/hops/order?stop_remote=1`, { method: "DELETE" });
  await closed.arrayBuffer();
}

/**
 * One `agentd serve` (its data dir and config its own): waits until it listens and idles, runs
 * `withWorker` on the worker, stops that worker and keeps its profile as `workerProfile`, then
 * stops the supervisor and keeps its profile as `supervisorProfile` when one is named.
 */
async function recordRun(
  name: string,
  config: string | undefined,
  withWorker: (worker: { pid: number; url: string }) => Promise<void>,
  workerProfile: string,
  supervisorProfile?: string,
): Promise<void> {
  const daemon = Bun.spawn([binary, "serve", "--port", "0", "--data-dir", join(work, name), ...(config ? ["--config", config] : [])], {
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
    const worker = JSON.parse(readFileSync(join(work, name, "ready.json"), "utf8")) as { pid: number; url: string };
    await within(`${name}: the worker's work`, withWorker(worker));
    // A stopped worker has written its profile when the supervisor logs its exit (it starts the next at once).
    process.kill(worker.pid, "SIGTERM");
    await within("worker.exit", until("worker.exit"));
    keep(workerProfile);
    // The supervisor stops the worker it started meanwhile (which writes again), then writes its own, last.
    daemon.kill("SIGTERM");
    await within("the supervisor's exit", daemon.exited);
    if (supervisorProfile) keep(supervisorProfile);
  } finally {
    if (daemon.exitCode === null) daemon.kill("SIGKILL");
  }
}

try {
  // Idle as `agentd serve` starts with no config file; then a worker that opens a hop.
  await recordRun("idle", undefined, async () => {}, "worker", "supervisor");
  await recordRun("hop", configPath, ({ pid, url }) => hopOnce(url, pid), "hop");
} finally {
  await sshd.stop();
  rmSync(work, { recursive: true, force: true });
  removeTempDirs();
}
