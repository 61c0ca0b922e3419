import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { chmodSync, copyFileSync, existsSync, readFileSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { damageMiddlePage, writeGarbageStore } from "../support/corruptStore.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";
import { startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// The compiled ./agentd on its data dir: one instance at a time, a damaged store refused at start,
// and no ready.json left behind by a supervisor that is gone.

const daemons: DaemonProcess[] = [];
afterEach(async () => {
  for (const daemon of daemons.splice(0)) await daemon.stop();
  removeTempDirs();
});

async function start(dataDir: string, config: Record<string, unknown> = {}): Promise<DaemonProcess> {
  const daemon = await startDaemon({ dataDir, config });
  daemons.push(daemon);
  return daemon;
}

/** `agentd serve` on the data dir of `daemon` (same config), run to completion. */
const serveAgain = (dataDir: string) =>
  runAgentd(["serve", "--port", "0", "--data-dir", dataDir, "--config", join(dataDir, "agentd.jsonc")], { timeoutMs: 60_000 });

/** SIGKILL to the supervisor and its worker, by pid, as a crash or `kill -9` would leave them. */
async function killHard(daemon: DaemonProcess): Promise<void> {
  const worker = daemon.workerPid();
  daemon.proc.kill("SIGKILL");
  process.kill(worker, "SIGKILL");
  await daemon.proc.exited;
  await waitFor("the worker to be gone", () => !isProcessAlive(worker), { timeoutMs: 10_000 });
}

function countRows(dataDir: string, table: "incidents" | "events"): number {
  const db = new Database(join(dataDir, "agentd.db"), { readonly: true, strict: true });
  try {
    return db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
  } finally {
    db.close();
  }
}

describe("one agentd per data dir", () => {
  test("a second serve on the same data dir exits 2 at once, names the running one, and changes nothing; after kill -9 a new one starts", async () => {
    const dataDir = makeTempDir("agentd-e2e-instance-");
    const first = await start(dataDir);
    const readyBefore = readFileSync(join(dataDir, "ready.json"), "utf8");
    const incidentsBefore = countRows(dataDir, "incidents");
    const eventsBefore = countRows(dataDir, "events");

    const second = await serveAgain(dataDir);
    expect(second.code).toBe(2);
    expect(second.stderr).toBe(`agentd: already running (pid ${first.proc.pid}) at ${first.url}; data dir ${dataDir}\n`);
    expect(second.stdout).toBe("");
    expect(readFileSync(join(dataDir, "ready.json"), "utf8")).toBe(readyBefore);
    expect(countRows(dataDir, "incidents")).toBe(incidentsBefore);
    expect(countRows(dataDir, "events")).toBe(eventsBefore);
    const logged = readFileSync(join(dataDir, "logs", "agentd.log"), "utf8");
    expect(logged.match(/"event":"supervisor\.start"/g)).toHaveLength(1);
    expect(first.proc.exitCode).toBeNull();
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);

    await killHard(first);
    const next = await start(dataDir);
    expect(JSON.parse(readFileSync(join(dataDir, "ready.json"), "utf8"))).toMatchObject({ supervisor_pid: next.proc.pid, url: next.url });
    expect((await fetch(`${next.url}/readyz`)).status).toBe(200);
  }, 120_000);
});

describe("a damaged store stops agentd at start with the path and the way out", () => {
  test("a damaged page in the middle of a store with data: exit 2, path and recovery on stderr, no worker, no stale ready.json; moved aside, a fresh store starts", async () => {
    const dataDir = makeTempDir("agentd-e2e-corrupt-");
    const store = join(dataDir, "agentd.db");
    // Killed hard, so the ready.json of its worker is left behind as after a crash.
    await killHard(await start(dataDir));
    expect(existsSync(join(dataDir, "ready.json"))).toBe(true);
    damageMiddlePage(store);

    const refused = await serveAgain(dataDir);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toStartWith(`agentd: the store at ${store} is damaged (`);
    expect(refused.stderr).toContain(`move ${store} aside`);
    expect(refused.stderr).toContain("agentd will start a fresh store and keep the old one");
    expect(refused.stdout).not.toContain('"event":"worker.spawned"');
    expect(refused.stdout).toContain('"event":"store.corrupt"');
    expect(existsSync(join(dataDir, "ready.json"))).toBe(false);

    renameSync(store, `${store}.damaged`);
    const fresh = await start(dataDir);
    expect((await fetch(`${fresh.url}/readyz`)).status).toBe(200);
    expect(existsSync(`${store}.damaged`)).toBe(true);
  }, 120_000);

  test("a file that is not a database: exit 2 with the path", async () => {
    const dataDir = makeTempDir("agentd-e2e-garbage-");
    const store = join(dataDir, "agentd.db");
    writeGarbageStore(store);
    const refused = await runAgentd(["serve", "--port", "0", "--data-dir", dataDir], { timeoutMs: 60_000 });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toStartWith(
      `agentd: the store at ${store} is damaged (file is not a database). To recover, move ${store} aside`,
    );
    expect(refused.stdout).not.toContain('"event":"worker.spawned"');
  }, 60_000);
});

describe("ready.json goes when the supervisor goes", () => {
  test("the supervisor gives up on a crash loop: exit 1 and no ready.json pointing at the dead worker", async () => {
    const dataDir = makeTempDir("agentd-e2e-ready-");
    // One restart allowed: the second worker killed is one too many.
    const daemon = await start(dataDir, { supervisor: { restart_max: 1 } });
    await daemon.killWorker();
    const last = daemon.workerPid();
    expect(JSON.parse(readFileSync(join(dataDir, "ready.json"), "utf8"))).toMatchObject({ pid: last, supervisor_pid: daemon.proc.pid });
    process.kill(last, "SIGKILL");
    expect(await daemon.proc.exited).toBe(1);
    expect(daemon.lines.some((r) => r.event === "supervisor.crash_loop")).toBe(true);
    expect(existsSync(join(dataDir, "ready.json"))).toBe(false);
  }, 120_000);

  test("a normal stop leaves no ready.json and frees the data dir", async () => {
    const dataDir = makeTempDir("agentd-e2e-ready-");
    const daemon = await start(dataDir);
    await daemon.stop();
    expect(daemon.proc.exitCode).toBe(0);
    expect(existsSync(join(dataDir, "ready.json"))).toBe(false);
    await start(dataDir);
  }, 120_000);
});

describe("a data dir across starts as root", () => {
  test("shared with the worker user, then a start that cannot split (a binary the service user cannot reach): taken back, a root worker, a new token", async () => {
    if (process.getuid?.() !== 0) throw new Error("needs root, as a server's agentd runs");
    const dataDir = makeTempDir("agentd-e2e-reclaim-");
    const shared = await start(dataDir);
    expect(statSync(dataDir).mode & 0o7777).toBe(0o1770);
    // The config stays root's: the monitor reads it, a worker that could write it could rewrite the policy.
    expect(statSync(join(dataDir, "agentd.jsonc")).uid).toBe(0);
    const sharedToken = readFileSync(join(dataDir, "token"), "utf8");
    await shared.stop();

    const closed = makeTempDir("agentd-e2e-closed-bin-");
    chmodSync(closed, 0o700);
    const binary = join(closed, "agentd");
    copyFileSync(await ensureBinary(), binary);
    const rootWorker = await startDaemon({ dataDir, config: {}, binary });
    daemons.push(rootWorker);
    expect(rootWorker.lines.some((r) => r.event === "data_dir.reclaimed")).toBe(true);
    expect(rootWorker.lines.find((r) => r.event === "security.worker_as_root")?.problem).toContain("cannot enter");
    expect(statSync(dataDir)).toMatchObject({ uid: 0, gid: 0 });
    expect(statSync(dataDir).mode & 0o7777).toBe(0o700);
    expect(readFileSync(join(dataDir, "token"), "utf8")).not.toBe(sharedToken);
    expect((await fetch(`${rootWorker.url}/readyz`)).status).toBe(200);
  }, 120_000);
});
