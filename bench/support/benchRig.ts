/**
 * The processes a proxy bench measures, in a temp dir of their own: the scripted upstream, the
 * bare relay and a collector stand-in (bench/support/benchServers.ts), and any number of compiled
 * agentds serving a config against that upstream. stop() ends every process by its pid.
 */
import type { Subprocess } from "bun";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AGENTD } from "../../tests/support/binary.ts";
import { makeCa, makeLeaf } from "../../tests/support/tlsCerts.ts";

const SERVERS = join(import.meta.dir, "benchServers.ts");

/** A running agentd: its chat URL, its supervisor's and worker's pids, and its data dir. */
export interface AgentdUnderTest {
  url: string;
  pids(): number[];
  dataDir: string;
}

/**
 * How long an agentd is left alone, once both its processes have released their code pages,
 * before its idle memory is read: the code its first timer rounds run comes back into RSS within
 * it. The pair still grows by some MB over the next minutes (docs/operations.md has the figures).
 */
export const IDLE_SETTLE_MS = 20_000;

export class BenchRig {
  readonly children: Subprocess[] = [];
  // Bun's fetch allows 256 connections at once by default: too few for the c=32 rounds' pools.
  readonly env = { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" };
  upstreamUrl = "";
  relayUrl = "";
  relayPid = 0;
  #collectorUrl: Promise<string> | undefined;
  /** Processes started by the rig's children (each agentd's worker, a gateway's child): pinned with the rest. */
  readonly #grandchildPids: Array<() => number[]> = [];

  private constructor(readonly dir: string) {}

  /**
   * Starts the upstream and the relay. With `tls`, the upstream serves HTTPS with a certificate from
   * a throwaway CA (made with the openssl CLI) that every process of the bench trusts through
   * NODE_EXTRA_CA_CERTS, as an operator's agentd trusts a cloud provider's.
   */
  static async start(options: { tls?: boolean } = {}): Promise<BenchRig> {
    const rig = new BenchRig(mkdtempSync(join(tmpdir(), "agentd-bench-")));
    const certs = options.tls ? rig.#makeCertificates() : [];
    const upstream = rig.#server("--upstream", join(rig.dir, "upstream"), ...certs);
    const scheme = options.tls ? "https" : "http";
    rig.upstreamUrl = `${scheme}://127.0.0.1:${await waitForFile(join(rig.dir, "upstream"), upstream)}/v1`;
    const relay = rig.#server("--relay", join(rig.dir, "relay"), rig.upstreamUrl);
    rig.relayUrl = `http://127.0.0.1:${await waitForFile(join(rig.dir, "relay"), relay)}/v1/chat/completions`;
    rig.relayPid = relay.pid;
    return rig;
  }

  /** The OTLP collector stand-in's base URL, started on first use (after the idle memory is read: PSS splits shared pages among processes). */
  collectorUrl(): Promise<string> {
    this.#collectorUrl ??= (async () => {
      const collector = this.#server("--collector", join(this.dir, "collector"));
      return `http://127.0.0.1:${await waitForFile(join(this.dir, "collector"), collector)}`;
    })();
    return this.#collectorUrl;
  }

  /** An agentd (`bin`, default ./agentd) serving `config` plus the bench provider, started as `agentd serve` is. */
  async startAgentd(
    name: string,
    config: Record<string, unknown> = {},
    options: { bin?: string; env?: Record<string, string> } = {},
  ): Promise<AgentdUnderTest> {
    const dataDir = join(this.dir, name);
    const configPath = join(this.dir, `${name}.jsonc`);
    writeFileSync(configPath, JSON.stringify({ providers: [{ name: "bench", base_url: this.upstreamUrl, api_key: "k" }], ...config }));
    const child = Bun.spawn(
      [options.bin ?? AGENTD, "serve", "--config", configPath, "--data-dir", dataDir, "--port", "0", "--bind", "127.0.0.1"],
      {
        stdout: "ignore",
        stderr: "inherit",
        env: { ...this.env, ...options.env },
      },
    );
    this.children.push(child);
    const ready = await waitForFile(join(dataDir, "ready.json"), child);
    const pids = () => [child.pid, workerPid(dataDir)];
    this.track(pids);
    return { url: `${(JSON.parse(ready) as { url: string }).url}/v1/chat/completions`, pids, dataDir };
  }

  /**
   * Waits until both processes of `agentd` have released their code pages (its log's
   * `memory.code_released` lines), then IDLE_SETTLE_MS more: its memory is then idle's.
   */
  async idle(agentd: AgentdUnderTest): Promise<void> {
    const log = join(agentd.dataDir, "logs", "agentd.log");
    const deadline = performance.now() + 30_000;
    for (;;) {
      let text = "";
      try {
        text = readFileSync(log, "utf8");
      } catch {
        // Not written yet.
      }
      if (text.split('"event":"memory.code_released"').length - 1 >= 2) break;
      if (performance.now() > deadline)
        throw new Error(`agentd in ${agentd.dataDir} never released its code pages (no memory.code_released lines in ${log})`);
      await Bun.sleep(100);
    }
    await Bun.sleep(IDLE_SETTLE_MS);
  }

  /** Every process of the bench: this one, the servers, each agentd's supervisor and worker. */
  pids(): number[] {
    return [process.pid, ...this.children.map((child) => child.pid), ...this.#grandchildPids.flatMap((pids) => pids())];
  }

  /** Counts `pids` among the bench's processes (pids(), and so onOneCpu): those a child started itself. */
  track(pids: () => number[]): void {
    this.#grandchildPids.push(pids);
  }

  /** Runs `rounds` where the scheduler places the processes, or all on `cpu` (onOneCpu); false where pinning was refused. */
  async placed(cpu: string | undefined, rounds: () => Promise<unknown>): Promise<boolean> {
    if (cpu !== undefined) return this.onOneCpu(cpu, rounds);
    await rounds();
    return true;
  }

  /**
   * Runs `rounds` with every process of the bench on `cpu`, then gives each process back the CPUs
   * it had (after a failure too). False, and `rounds` not run, where taskset is missing or refuses.
   */
  async onOneCpu(cpu: string, rounds: () => Promise<unknown>): Promise<boolean> {
    const before = this.pids().map((pid) => [pid, cpuListOf(pid)] as const);
    try {
      if (!setAffinity(this.pids(), cpu)) return false;
      await rounds();
      return true;
    } finally {
      for (const [pid, cpus] of before) if (cpus) setAffinity([pid], cpus);
    }
  }

  async stop(): Promise<void> {
    for (const child of this.children) child.kill();
    await Promise.all(this.children.map((child) => child.exited));
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A CA the bench's processes trust, and a leaf it signed for 127.0.0.1: the leaf's certificate and key files. */
  #makeCertificates(): [string, string] {
    makeCa(this.dir, "ca");
    makeLeaf(this.dir, "leaf", "ca", "IP:127.0.0.1", 2);
    (this.env as Record<string, string>).NODE_EXTRA_CA_CERTS = join(this.dir, "ca.pem");
    return [join(this.dir, "leaf.pem"), join(this.dir, "leaf.key")];
  }

  #server(...args: string[]): Subprocess {
    const child = Bun.spawn([process.execPath, SERVERS, ...args], { stdout: "ignore", stderr: "inherit", env: this.env });
    this.children.push(child);
    return child;
  }
}

export async function waitForFile(path: string, child: Subprocess): Promise<string> {
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

/** RSS and PSS of a process, in MB (smaps_rollup). */
export function memoryOf(pid: number): { rss: number; pss: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup)![1]) / 1024;
  return { rss: kb("Rss"), pss: kb("Pss") };
}

/**
 * Moves every thread of `pids` onto `cpus` (taskset's list form). False, with a note, where taskset
 * is missing or refuses: the pinned rows are then left out.
 */
export function setAffinity(pids: number[], cpus: string): boolean {
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
