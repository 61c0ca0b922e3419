/**
 * Hop benchmark on a loopback OpenSSH server (the "remote" is this machine with another HOME):
 * first hop (upload + start) and bytes on the wire against the binary's size, second hop (nothing
 * to upload), and exec_command("echo hi") through the tunnel against the same call to a local agentd.
 * Then the worker's memory: `agentd serve` opens a hop through its API; its worker's RSS idle, right
 * after the hop, settled, and after sshd was killed and the hop reconnected (target, issue 23: ≤ idle + 15 MB);
 * each settled figure is read once the worker has released the code pages of the work before it
 * (memory.code_released) and IDLE_SETTLE_MS more have passed.
 * Run: node_modules/.bin/bun bench/hop.ts — prints a markdown table. Needs ./agentd (built if stale).
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createHopManager, hopMigrations, hopsConfigSchema } from "../src/hop/index.ts";
import { setLogSink } from "../src/core/log/index.ts";
import { baseMigrations, openStore } from "../src/core/store/index.ts";
import { ensureBinary } from "../tests/support/binary.ts";
import { startDaemon } from "../tests/e2e/support/daemonProcess.ts";
import { startSshd } from "../tests/support/sshd.ts";
import { makeTempDir, removeTempDirs } from "../tests/support/tempDir.ts";
import { isProcessAlive, waitFor } from "../tests/support/waitFor.ts";
import { IDLE_SETTLE_MS } from "./support/benchRig.ts";

// The table is the output; the hop manager's log lines go to stderr.
setLogSink((line) => process.stderr.write(`${line}\n`));

const ECHO_ROUNDS = 40;
const RSS_BUDGET_MB = 15;

interface Rss {
  total: number;
  anon: number;
  file: number;
}

/** VmRSS with its two parts (RssAnon: heap and JIT code; RssFile: pages of the binary mapped), in MB. */
function rssMb(pid: number): Rss {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1]) / 1024;
  return { total: mb("VmRSS"), anon: mb("RssAnon"), file: mb("RssFile") };
}

/** The worker of a real `agentd serve`: RSS idle, after opening one hop, and after that hop reconnected. */
async function workerRss(sshd: Awaited<ReturnType<typeof startSshd>>, dataDir: string): Promise<string[][]> {
  const daemon = await startDaemon({
    dataDir,
    config: {
      hops: {
        known_hosts: join(dataDir, "known_hosts"),
        identity_files: [sshd.clientKeyPath],
        use_agent: false,
        remote_dir: "~/.agentd-rss",
        reconnect_initial_ms: 100,
        reconnect_max_ms: 1000,
      },
    },
  });
  try {
    const pid = daemon.workerPid();
    // Read as bench/startup.ts reads idle: once the worker has released the code pages of the work
    // that came before (its start, a hop's connecting), and IDLE_SETTLE_MS more.
    const settledAfter = async (work: string, from: number) => {
      await daemon.waitForLine((r) => r.event === "memory.code_released" && (r.after as string[]).includes(work), from);
      await Bun.sleep(IDLE_SETTLE_MS);
      return rssMb(pid);
    };
    const idle = await settledAfter("start", 0);
    const beforeHop = daemon.lines.length;
    const response = await fetch(`${daemon.url}/api/hops`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ destination: `${sshd.user}@127.0.0.1:${sshd.port}`, accept_new: true, name: "rss" }),
    });
    const opened = (await response.json()) as { hop?: { state: string; upload: { uploaded: boolean } | null } };
    if (response.status !== 201 || opened.hop?.state !== "connected" || !opened.hop.upload?.uploaded)
      throw new Error(`the worker's hop did not open with an upload: ${response.status} ${JSON.stringify(opened)}`);
    const rightAfter = rssMb(pid);
    const settled = await settledAfter("hop.connected", beforeHop);
    const beforeReconnect = daemon.lines.length;
    await sshd.kill();
    await sshd.restart();
    await waitFor(
      "the worker's hop to reconnect",
      async () => {
        const listed = (await (await fetch(`${daemon.url}/api/hops/rss`)).json()) as { hop?: { state: string } };
        return listed.hop?.state === "connected";
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    const reconnected = await settledAfter("hop.connected", beforeReconnect);
    await fetch(`${daemon.url}/api/hops/rss?stop_remote=1`, { method: "DELETE" });
    const mb = (value: Rss) => `${value.total.toFixed(1)} MB (anon ${value.anon.toFixed(1)} + file ${value.file.toFixed(1)})`;
    const verdict = (value: Rss) =>
      `${value.total - idle.total <= RSS_BUDGET_MB ? "✓" : "✗"} +${(value.total - idle.total).toFixed(1)} MB: anon +${(value.anon - idle.anon).toFixed(1)}, file +${(value.file - idle.file).toFixed(1)}`;
    return [
      ["worker RSS idle", mb(idle), "—"],
      ["worker RSS right after one hop (upload + start)", `${mb(rightAfter)} (${verdict(rightAfter)})`, `≤ idle + ${RSS_BUDGET_MB} MB`],
      [
        `worker RSS after the hop, settled (${IDLE_SETTLE_MS / 1000} s after its code was released)`,
        `${mb(settled)} (${verdict(settled)})`,
        `≤ idle + ${RSS_BUDGET_MB} MB`,
      ],
      [
        "worker RSS after sshd killed and the hop reconnected, settled",
        `${mb(reconnected)} (${verdict(reconnected)})`,
        `≤ idle + ${RSS_BUDGET_MB} MB`,
      ],
    ];
  } finally {
    await daemon.stop();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function timeEcho(call: () => Promise<{ output: string }>): Promise<number> {
  const samples: number[] = [];
  await call(); // warm: connection pool, first spawn
  for (let i = 0; i < ECHO_ROUNDS; i++) {
    const started = performance.now();
    const result = await call();
    samples.push(performance.now() - started);
    if (!result.output.includes("hi")) throw new Error(`echo answered ${JSON.stringify(result.output)}`);
  }
  return median(samples);
}

const binary = await ensureBinary();
const remoteHome = makeTempDir("agentd-bench-hop-remote-");
const local = makeTempDir("agentd-bench-hop-local-");
const sshd = await startSshd({ env: { HOME: remoteHome } });
const db = openStore({ path: join(local, "agentd.db"), migrations: [...baseMigrations, ...hopMigrations] });
const manager = createHopManager({
  db,
  dataDir: local,
  config: hopsConfigSchema().parse({ known_hosts: join(local, "known_hosts"), identity_files: [], use_agent: false }),
  selfBinaryPath: binary,
});
const localAgentd = Bun.spawn([binary, "serve", "--port", "0", "--data-dir", join(local, "daemon")], {
  stdin: "ignore",
  stdout: "ignore",
  stderr: "ignore",
  env: { ...process.env, AGENTD_CONFIG: undefined, AGENTD_DATA_DIR: undefined },
});
try {
  const request = { destination: `${sshd.user}@127.0.0.1:${sshd.port}`, identity: sshd.clientKeyPath, accept_new: true, name: "bench" };
  let started = performance.now();
  const first = await manager.open(request);
  const firstMs = performance.now() - started;
  await manager.closeHop("bench");
  started = performance.now();
  const second = await manager.open({ ...request, accept_new: false });
  const secondMs = performance.now() - started;
  if (first.upload?.uploaded !== true || second.upload?.uploaded !== false) throw new Error("expected an upload on the first hop only");

  const client = manager.client("bench");
  const remoteMs = await timeEcho(() => client.exec({ cmd: "echo hi", yield_time_ms: 5000 }));
  const ready = await waitFor(
    "the local agentd's ready file",
    () => {
      try {
        return JSON.parse(readFileSync(join(local, "daemon", "ready.json"), "utf8")) as { url: string };
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 30_000 },
  );
  const localMs = await timeEcho(async () => {
    const response = await fetch(`${ready.url}/api/pty`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ cmd: "echo hi", yield_time_ms: 5000 }),
    });
    if (!response.ok) throw new Error(`local /api/pty answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as { output: string };
  });

  const size = first.upload!.binary_bytes;
  const wire = first.upload!.wire_bytes;
  const rows = [
    ["first hop (upload + start)", `${(firstMs / 1000).toFixed(2)} s`, "—"],
    [
      "bytes on the wire / binary size",
      `${(wire / 1048576).toFixed(1)} MiB / ${(size / 1048576).toFixed(1)} MiB = ${(wire / size).toFixed(2)}×`,
      "≤ 0.5×",
    ],
    ["second hop (nothing uploaded)", `${(secondMs / 1000).toFixed(2)} s`, "≤ 1.5 s"],
    [`exec_command("echo hi") remote, median of ${ECHO_ROUNDS}`, `${remoteMs.toFixed(1)} ms`, "—"],
    [`exec_command("echo hi") local agentd, median of ${ECHO_ROUNDS}`, `${localMs.toFixed(1)} ms`, "—"],
    ["remote / local echo", `${(remoteMs / localMs).toFixed(2)}×`, "≤ 3×"],
  ];
  mkdirSync(join(local, "rss"));
  rows.push(...(await workerRss(sshd, join(local, "rss"))));
  console.log("| measure | value | target |\n| --- | --- | --- |");
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
} finally {
  await manager.closeHop("bench", { stopRemote: true }).catch(() => undefined);
  await manager.close();
  localAgentd.kill("SIGTERM");
  await localAgentd.exited;
  for (const dir of [".agentd", ".agentd-rss"]) {
    try {
      const ready = JSON.parse(readFileSync(join(remoteHome, dir, "ready.json"), "utf8")) as { supervisor_pid: number | null; pid: number };
      for (const pid of [ready.supervisor_pid, ready.pid]) if (pid && isProcessAlive(pid)) process.kill(pid, "SIGTERM");
    } catch {
      // Stopped by closing its hop already.
    }
  }
  await sshd.stop();
  db.close();
  removeTempDirs();
  rmSync(local, { recursive: true, force: true });
}
