import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import {
  chmodSync,
  existsSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { parseLogLine, readLines, type LogRecord } from "../../src/core/log/index.ts";
import { binaryForAnyUser, cleanEnv, stopChild } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";

// The compiled agentd started as root, laid out as systemd would (state under /var/lib, config
// root's alone): the supervisor stays root as a small monitor and the worker drops to the service
// user `agentd`. A killed worker's commands end with it; the worker reads the root-only config
// through the monitor and reloads through it (it may not signal root).

let proc: Subprocess<"ignore", "pipe", "pipe"> | undefined;
let stateParent = "";
let dataDir = "";
let configPath = "";
let url = "";
let token = "";
const lines: LogRecord[] = [];
const workers: number[] = [];

async function api<T = any>(path: string, body?: unknown): Promise<T> {
  const response = await fetch(url + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, accept: "application/json", "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

let binaryPath = "";
let cwd = "";

function startAgentd(): Subprocess<"ignore", "pipe", "pipe"> {
  const child = Bun.spawn([binaryPath, "serve", "--port", "0", "--data-dir", dataDir, "--config", configPath], {
    cwd,
    env: cleanEnv({ HOME: "/root", USER: "root" }),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  void readLines(child.stdout, (line) => {
    const record = parseLogLine(line);
    if (!record) return;
    lines.push(record);
    if (record.event === "worker.spawned" && typeof record.pid === "number") workers.push(record.pid);
  });
  return child;
}

const workerUid = () =>
  Number(
    lines.find((r) => r.event === "security.worker_user" && r.component === "supervisor")?.uid ?? statSync(join(dataDir, "token")).uid,
  );

const statusField = (pid: number, field: string) =>
  new RegExp(`^${field}:\\s*(.*)$`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error("The worker split test needs root (.ci/run runs as root)");
  const binary = await binaryForAnyUser();
  stateParent = mkdtempSync("/var/lib/agentd-split-");
  chmodSync(stateParent, 0o755);
  dataDir = join(stateParent, "data");
  mkdirSync(dataDir, { mode: 0o700 });
  // The config where only root may read it: the worker gets it from the monitor.
  const etc = makeTempDir("agentd-split-etc-");
  configPath = join(etc, "agentd.jsonc");
  writeFileSync(configPath, JSON.stringify({ providers: [{ name: "none", base_url: "http://127.0.0.1:9/v1", api_key: "split-test" }] }), {
    mode: 0o600,
  });
  binaryPath = binary;
  cwd = etc;
  proc = startAgentd();
  const listening = await waitFor("the worker to listen", () => lines.find((r) => r.event === "http.listening"), { timeoutMs: 60_000 });
  url = String(listening.url);
  token = readFileSync(join(dataDir, "token"), "utf8").trim();
}, 120_000);

afterAll(async () => {
  if (proc) await stopChild(proc, 20_000);
  for (const pid of workers) if (isProcessAlive(pid)) process.kill(pid, "SIGKILL");
  removeTempDirs();
  if (stateParent) rmSync(stateParent, { recursive: true, force: true });
}, 60_000);

describe("agentd started as root splits into a root monitor and a worker as the service user", () => {
  test("the worker runs as agentd with no capability and no_new_privs; the supervisor stays root", async () => {
    const worker = workers.at(-1)!;
    const service = lines.find((r) => r.event === "security.worker_user" && r.component === "supervisor");
    expect(service).toMatchObject({ user: "agentd" });
    expect(
      statusField(worker, "Uid")!
        .split(/\s+/)
        .every((uid) => uid === String(service!.uid)),
    ).toBe(true);
    expect(statusField(worker, "CapEff")).toBe("0000000000000000");
    expect(statusField(worker, "CapBnd")).toBe("0000000000000000");
    expect(statusField(worker, "NoNewPrivs")).toBe("1");
    expect(statSync(`/proc/${proc!.pid}`).uid).toBe(0);
    const status = await api("/status");
    expect(status.worker.privilege_gate).toMatchObject({ mode: "command_user", user: "agentd-cmd", worker_user: "agentd" });
  });

  test("the data dir is shared as /tmp is: root's and sticky, the log directory and lock root's alone", () => {
    const dir = lstatSync(dataDir);
    expect(dir.uid).toBe(0);
    expect(dir.mode & 0o7777).toBe(0o1770);
    expect(lstatSync(join(dataDir, "logs")).uid).toBe(0);
    expect(lstatSync(join(dataDir, "agentd.lock")).uid).toBe(0);
    expect(lstatSync(join(dataDir, "agentd.db")).uid).not.toBe(0);
    expect(lstatSync(join(dataDir, "token")).mode & 0o777).toBe(0o600);
  });

  test("commands still run as the command user, started by the monitor", async () => {
    const result = await api<{ output: string }>("/api/pty", { cmd: "id -un; grep NoNewPrivs /proc/self/status", yield_time_ms: 5000 });
    expect(result.output).toContain("agentd-cmd");
    expect(result.output).toMatch(/NoNewPrivs:\s+1/);
    // The monitor's line leaves in its next log batch (up to 50 ms after the command started): waited for, not assumed.
    await waitFor("the monitor's start line", () => lines.some((r) => r.event === "monitor.start" && r.kind === "command"));
  });

  test("a reload reaches the root supervisor through the monitor and re-reads the root-only config", async () => {
    writeFileSync(
      configPath,
      JSON.stringify({
        providers: [{ name: "renamed", base_url: "http://127.0.0.1:9/v1", api_key: "split-test" }],
        pty: { max_sessions: 16 },
        supervisor: { stop_grace_ms: 14_000 },
      }),
    );
    expect(await api("/api/admin/reload", {})).toEqual({
      result: "reloaded",
      applied: ["providers", "pty.max_sessions"],
      needs_restart: ["supervisor.stop_grace_ms"],
    });
    const providers = await api<{ providers: Array<{ name: string }> }>("/api/admin/proxy/providers");
    expect(providers.providers.map((p) => p.name)).toEqual(["renamed"]);
  });

  test("a worker killed with SIGKILL takes its commands with it, and the new one works", async () => {
    const opened = await api<{ session_id: string; output: string }>("/api/pty", {
      cmd: "setsid sleep 300 & echo detached=$!; sleep 300",
      yield_time_ms: 1500,
    });
    const detached = Number(/detached=(\d+)/.exec(opened.output)![1]);
    expect(isProcessAlive(detached)).toBe(true);
    const worker = workers.at(-1)!;
    process.kill(worker, "SIGKILL");
    await waitFor("the detached command to end", () => (isProcessAlive(detached) ? undefined : true), { timeoutMs: 15_000 });
    await waitFor(
      "a new worker",
      () => (workers.length > 1 && lines.filter((r) => r.event === "http.listening").length > 1 ? true : undefined),
      {
        timeoutMs: 60_000,
      },
    );
    expect(lines.some((r) => r.event === "pty.orphans_killed")).toBe(true);
    const again = await api<{ output: string }>("/api/pty", { cmd: "id -un", yield_time_ms: 5000 });
    expect(again.output).toContain("agentd-cmd");
  }, 90_000);

  test("restarted over a data dir a worker had, root follows no link it left and starts again", async () => {
    await stopChild(proc!, 20_000);
    // What a worker taken over could leave behind for root: links in place of the store's files and the log directory.
    const victim = join(makeTempDir("agentd-split-victim-"), "passwd");
    writeFileSync(victim, "root:x:0:0::/root:/bin/bash\n", { mode: 0o644 });
    rmSync(join(dataDir, "agentd.db-wal"), { force: true });
    symlinkSync(victim, join(dataDir, "agentd.db-wal"));
    lchownSync(join(dataDir, "agentd.db-wal"), workerUid(), workerUid());
    lines.length = 0;
    proc = startAgentd();
    // Started with --port 0 again: a new port.
    url = String(
      (await waitFor("the worker to listen again", () => lines.find((r) => r.event === "http.listening"), { timeoutMs: 60_000 })).url,
    );
    expect(lines.find((r) => r.event === "security.links_removed")).toMatchObject({ paths: [join(dataDir, "agentd.db-wal")] });
    expect(readFileSync(victim, "utf8")).toBe("root:x:0:0::/root:/bin/bash\n");
    expect(lstatSync(join(dataDir, "agentd.db-wal")).isSymbolicLink()).toBe(false);
  }, 90_000);

  test("a supervisor killed with SIGKILL while a terminal runs: its worker stops at once, lets go of ready.json and hangs up the terminal", async () => {
    // The worker may not signal the command user's processes, and its monitor is gone: ending the
    // session fails, and that must stop neither the worker's shutdown nor its cleanup.
    const opened = await api<{ output: string }>("/api/pty", { cmd: "echo pid=$$; exec sleep 300", yield_time_ms: 1500 });
    const command = Number(/pid=(\d+)/.exec(opened.output)![1]);
    const worker = workers.at(-1)!;
    proc!.kill("SIGKILL");
    await proc!.exited;
    await waitFor("the orphaned worker to stop", () => (isProcessAlive(worker) ? undefined : true), { timeoutMs: 10_000 });
    expect(existsSync(join(dataDir, "ready.json"))).toBe(false);
    // Its session's terminal closed with it: the command got SIGHUP.
    await waitFor("the command to end", () => (isProcessAlive(command) ? undefined : true), { timeoutMs: 10_000 });
  }, 90_000);
});
