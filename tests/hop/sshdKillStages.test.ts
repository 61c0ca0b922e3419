import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createHopManager, hopMigrations, hopsConfigSchema, type HopManager, type HopProgress } from "../../src/hop/index.ts";
import { baseMigrations, openStore, type Database } from "../../src/core/store/index.ts";
import type { Logger } from "../../src/core/log/index.ts";
import { ensureBinary } from "../support/binary.ts";
import { preinstallAgentd } from "../support/remoteAgentd.ts";
import { startSshd, type TestSshd } from "../support/sshd.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";

// sshd killed (SIGKILL, with its per-connection children) at each stage of a hop. Each stage is
// reached by an observable event, never a sleep: sshd held with SIGSTOP while a connection sits in
// its backlog, the host-key check of the key exchange, the first upload progress, a command seen
// running. An error event nobody listens to fails the running test (bun test reports it), so every
// case also proves that none was emitted.

interface LogLine {
  event: string;
  fields: Record<string, unknown>;
}

/** Keeps every line and lets a test act synchronously the moment an event is logged. */
function recordingLogger(lines: LogLine[], hooks: Map<string, () => void>): Logger {
  const write = (event: string, fields: Record<string, unknown> = {}) => {
    lines.push({ event, fields });
    hooks.get(event)?.();
  };
  const logger: Logger = { debug: write, info: write, warn: write, error: write, child: () => logger };
  return logger;
}

/** TCP sockets of this process connected to `port`: what an ssh2 client leaks if it is never ended. */
function socketsTo(port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // The fd closed while we looked.
    }
  }
  let count = 0;
  for (const table of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && Number.parseInt(cols[2]!.split(":")[1]!, 16) === port && inodes.has(cols[9]!)) count++;
    }
  }
  return count;
}

/** A remote agentd a hop started (same machine): stopped by the pids of its ready file. */
async function stopRemoteAgentd(dataDir: string): Promise<void> {
  const readyPath = join(dataDir, "ready.json");
  if (!existsSync(readyPath)) return;
  const ready = JSON.parse(readFileSync(readyPath, "utf8")) as { pid: number; supervisor_pid: number | null };
  const pids = [ready.supervisor_pid, ready.pid].filter((pid): pid is number => typeof pid === "number" && isProcessAlive(pid));
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // The supervisor, stopped first, may have ended its worker in between.
    }
  }
  await waitFor("the remote agentd to stop", () => pids.every((pid) => !isProcessAlive(pid)), { timeoutMs: 30_000 });
}

describe("sshd killed at every stage of a hop", () => {
  let binary: string;
  let sshd: TestSshd;
  let local: string;
  let remoteRoot: string;
  let db: Database;
  let dest: string;
  const managers: HopManager[] = [];
  const remoteDirs: string[] = [];
  const lines: LogLine[] = [];
  const hooks = new Map<string, () => void>();

  /** A manager of its own per case; `remoteDir` is where the remote agentd lives (a fresh one uploads). */
  const newManager = (remoteDir: string, extra: Record<string, unknown> = {}) => {
    if (!remoteDirs.includes(remoteDir)) remoteDirs.push(remoteDir);
    const manager = createHopManager({
      db,
      dataDir: local,
      selfBinaryPath: binary,
      logger: recordingLogger(lines, hooks),
      config: hopsConfigSchema().parse({
        known_hosts: join(local, "known_hosts"),
        identity_files: [],
        use_agent: false,
        reconnect_initial_ms: 100,
        reconnect_max_ms: 500,
        keepalive_interval_ms: 2000,
        remote_dir: remoteDir,
        ...extra,
      }),
    });
    managers.push(manager);
    return manager;
  };
  const request = (name: string, acceptNew = false) => ({ destination: dest, identity: sshd.clientKeyPath, accept_new: acceptNew, name });
  const failureOf = (opening: Promise<unknown>) =>
    opening.then(
      () => ({ code: "opened", message: "" }),
      (error: { code: string; message: string }) => error,
    );
  const noSocketsLeft = () => waitFor(`no socket to sshd's port ${sshd.port}`, () => socketsTo(sshd.port) === 0, { timeoutMs: 15_000 });
  const restartIfDown = async () => {
    if (!isProcessAlive(sshd.pid())) await sshd.restart();
  };

  beforeAll(async () => {
    binary = await ensureBinary();
    remoteRoot = makeTempDir("agentd-hop-kill-remote-");
    sshd = await startSshd({ env: { HOME: remoteRoot } });
    dest = `${sshd.user}@127.0.0.1:${sshd.port}`;
    local = makeTempDir("agentd-hop-kill-local-");
    db = openStore({ path: join(local, "agentd.db"), migrations: [...baseMigrations, ...hopMigrations] });
  }, 180_000);

  afterEach(async () => {
    hooks.clear();
    // A stopped sshd would hold the next case; a killed one is started again.
    if (isProcessAlive(sshd.pid())) process.kill(sshd.pid(), "SIGCONT");
    await restartIfDown();
  }, 60_000);

  afterAll(async () => {
    for (const manager of managers) await manager.close();
    for (const dir of remoteDirs) await stopRemoteAgentd(dir);
    await sshd?.stop();
    db?.close();
    removeTempDirs();
  }, 120_000);

  test("before the TCP accept (nothing listens): a clear connect error, no socket left", async () => {
    const manager = newManager(join(remoteRoot, "refused"));
    await sshd.kill();
    const failure = await failureOf(manager.open(request("refused", true)));
    expect(failure.code).toBe("hop_connect_failed");
    expect(failure.message).toContain(`127.0.0.1:${sshd.port}`);
    expect(manager.get("refused").state).toBe("closed");
    await noSocketsLeft();
  }, 60_000);

  test("right after the TCP accept (held in a stopped sshd's backlog, then reset by its death): one clear error", async () => {
    const manager = newManager(join(remoteRoot, "reset"));
    process.kill(sshd.pid(), "SIGSTOP");
    let killed: Promise<void> | undefined;
    // The kernel completed the TCP handshake for the stopped sshd; its death resets the connection,
    // and ssh2 then emits two errors: the reset, and "Connection lost before handshake" on close.
    hooks.set("hop.ssh_tcp_connected", () => {
      killed = sshd.kill();
    });
    const failure = await failureOf(manager.open(request("reset", true)));
    await killed;
    expect(killed).toBeDefined();
    expect(failure.code).toBe("hop_connect_failed");
    expect(failure.message).toContain(`127.0.0.1:${sshd.port}`);
    await noSocketsLeft();
  }, 60_000);

  test("frozen before its banner (SIGSTOP): the ready timeout fails the hop, and the late close raises nothing", async () => {
    // Installed already: the open after SIGCONT is about the handshake, not the upload.
    await preinstallAgentd(join(remoteRoot, "frozen"));
    const manager = newManager(join(remoteRoot, "frozen"), { connect_timeout_ms: 1000 });
    process.kill(sshd.pid(), "SIGSTOP");
    const failure = await failureOf(manager.open(request("frozen", true)));
    expect(failure.code).toBe("hop_connect_failed");
    expect(failure.message).toContain("did not complete the SSH handshake in time");
    await noSocketsLeft();
    process.kill(sshd.pid(), "SIGCONT");
    // The same sshd serves again once it runs.
    await manager.open(request("frozen", true));
    expect(manager.get("frozen").state).toBe("connected");
    await manager.closeHop("frozen");
    await noSocketsLeft();
  }, 180_000);

  test("during the key exchange (killed while the client checks the host key): a clear connect error", async () => {
    rmSync(join(local, "known_hosts"), { force: true });
    const manager = newManager(join(remoteRoot, "kex"));
    let killed: Promise<void> | undefined;
    // Logged from inside ssh2's host key check, in the middle of the key exchange.
    hooks.set("hop.host_key_added", () => {
      killed = sshd.kill();
    });
    const failure = await failureOf(manager.open(request("kex", true)));
    await killed;
    expect(killed).toBeDefined();
    expect(failure.code).toBe("hop_connect_failed");
    expect(manager.get("kex").state).toBe("closed");
    await noSocketsLeft();
  }, 60_000);

  test("during the upload: a clear upload error, the next open after a restart uploads in full", async () => {
    const manager = newManager(join(remoteRoot, "upload"));
    let killed: Promise<void> | undefined;
    const onProgress = (event: HopProgress) => {
      if (event.step === "upload" && (event.bytes ?? 0) > 0 && (event.bytes ?? 0) < (event.total ?? 0)) killed ??= sshd.kill();
    };
    const failure = await failureOf(manager.open(request("upload", true), onProgress));
    await killed;
    expect(killed).toBeDefined();
    expect(["hop_upload_failed", "hop_disconnected"]).toContain(failure.code);
    expect(manager.get("upload").state).toBe("closed");
    await noSocketsLeft();

    await sshd.restart();
    const hop = await manager.open(request("upload"));
    expect(hop.state).toBe("connected");
    expect(hop.upload).toMatchObject({ uploaded: true, verified: "sha256" });
    await manager.closeHop("upload");
    await noSocketsLeft();
  }, 240_000);

  test("during a command: the call fails as disconnected, the hop reconnects after the restart", async () => {
    // The remote agentd of the upload case is installed there already: nothing to upload.
    const manager = newManager(join(remoteRoot, "upload"));
    await manager.open(request("command"));
    const client = manager.client("command");
    const inFlight = failureOf(client.exec({ cmd: "sleep 60", yield_time_ms: 25_000 }));
    await waitFor("the sleep to run remotely", async () => (await client.listSessions()).some((s) => s.cmd === "sleep 60"));
    await sshd.kill();
    expect((await inFlight).code).toBe("hop_disconnected");
    await waitFor("the hop to be reconnecting", () => manager.get("command").state === "reconnecting");
    await sshd.restart();
    await waitFor("the hop to be connected again", () => manager.get("command").state === "connected", { timeoutMs: 60_000 });
    expect((await manager.client("command").exec({ cmd: "echo back", yield_time_ms: 5000 })).output).toContain("back");
    expect(lines.some((line) => line.event === "hop.reconnected")).toBe(true);
    expect(lines.filter((line) => line.event === "background.failed" || line.event === "hop.state_save_failed")).toEqual([]);
    await manager.closeHop("command");
    await noSocketsLeft();
  }, 180_000);
});
