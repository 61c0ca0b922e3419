import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { ensureBinary } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// SIGHUP to the supervisor re-reads the config: a new provider shows in /status, the incident of a
// check that keeps failing is the same one (not reopened), and an open event stream survives
// because the worker is the same process. A broken file keeps the running config and says where.

let daemon: DaemonProcess | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
}, 60_000);
afterAll(removeTempDirs);

interface Status {
  providers: { rows: Array<{ name: string }> };
}

// Each run leaves a line, so the test knows the check ran under the reloaded watchdog.
const failingCheck = (runs: string) => ({
  tick_ms: 100,
  checks: [
    {
      type: "command",
      name: "db",
      argv: ["sh", "-c", `echo run >> '${runs}'; exit 1`],
      interval_s: 0.2,
      timeout_ms: 5000,
      failure_threshold: 1,
    },
  ],
});
const runsIn = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0);
const provider = (name: string) => ({ name, base_url: "http://127.0.0.1:9/v1", api_key: "k" });

const providerNames = async (url: string) => (await api<Status>(url, "/status?format=json")).providers.rows.map((row) => row.name).sort();

describe("config reload of ./agentd (SIGHUP)", () => {
  test("a good file applies in place; a bad one keeps the old config and shows file:line:col", async () => {
    await ensureBinary();
    const dir = makeTempDir("agentd-reload-");
    // The check runs as the command user (agentd starts as root here): it leaves its lines there.
    chmodSync(dir, 0o777);
    const dataDir = join(dir, "data");
    mkdirSync(dataDir);
    const runs = join(dir, "runs");
    const watchdog = failingCheck(runs);
    daemon = await startDaemon({ dataDir, config: { providers: [provider("first")], watchdog } });
    const { url } = daemon;
    const workerPid = daemon.workerPid();
    const incidents = async () =>
      (
        await api<{ incidents: Array<{ id: number; fingerprint: string; state: string }> }>(url, "/api/incidents?limit=500")
      ).incidents.filter((i) => i.fingerprint === "check:db");
    const [opened] = await waitFor("the check's incident", async () => ((await incidents()).length ? incidents() : undefined), {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    expect(await providerNames(url)).toEqual(["first"]);

    // One keep-alive connection: a request before the reload, one after, on the same socket.
    const keepAlive = await openKeepAlive(url);
    await keepAlive.get("/health", 1);

    const before = daemon.lines.length;
    writeFileSync(daemon.configPath, JSON.stringify({ providers: [provider("first"), provider("second")], watchdog }));
    process.kill(daemon.proc.pid, "SIGHUP");
    await daemon.waitForLine((r) => r.event === "config.reloaded" && r.component === "worker", before);
    await daemon.waitForLine((r) => r.event === "config.reloaded" && r.component === "supervisor", before);
    expect(await providerNames(url)).toEqual(["first", "second"]);
    // Ten more runs of the failing check under the new watchdog runtime: still the one incident.
    const runsAtReload = runsIn(runs);
    await waitFor("ten check runs after the reload", () => runsIn(runs) >= runsAtReload + 10, { timeoutMs: 60_000, intervalMs: 100 });
    expect((await incidents()).map((i) => i.id)).toEqual([opened!.id]);
    expect(daemon.lines.slice(before).filter((r) => r.event === "watchdog.incident_opened")).toEqual([]);
    expect(daemon.workerPid()).toBe(workerPid);
    await keepAlive.get("/health", 2);

    const bad = daemon.lines.length;
    writeFileSync(daemon.configPath, '{\n  "providers": [\n    { "name": "third", "base_url": 5 }\n  ]\n}\n');
    process.kill(daemon.proc.pid, "SIGHUP");
    await daemon.waitForLine((r) => r.event === "config.reload_failed" && r.component === "worker", bad);
    await daemon.waitForLine((r) => r.event === "config.reload_failed" && r.component === "supervisor", bad);
    expect(await providerNames(url)).toEqual(["first", "second"]);
    const health = await api<{ notes: string[] }>(url, "/health");
    const note = health.notes.find((n) => n.startsWith("config reload failed:"));
    expect(note).toContain(`${daemon.configPath}:3:`);
    expect(daemon.workerPid()).toBe(workerPid);
    await keepAlive.get("/health", 3);
    expect(keepAlive.closed()).toBe(false);
    keepAlive.end();
  }, 120_000);
});

/** A raw HTTP/1.1 connection kept open: each `get` waits for the n-th response on the same socket. */
async function openKeepAlive(url: string) {
  const { hostname, port, host } = new URL(url);
  let received = "";
  let closed = false;
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect({ host: hostname, port: Number(port) }, () => resolve(s));
    s.once("error", reject);
  });
  socket.on("error", () => undefined);
  socket.on("data", (chunk) => {
    received += chunk.toString("latin1");
  });
  socket.on("close", () => {
    closed = true;
  });
  return {
    async get(path: string, nth: number) {
      expect(closed).toBe(false);
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`);
      await waitFor(`response ${nth} on the kept-alive socket`, () => (received.match(/HTTP\/1\.1 200/g)?.length ?? 0) >= nth, {
        timeoutMs: 10_000,
        intervalMs: 20,
      });
    },
    closed: () => closed,
    end: () => socket.destroy(),
  };
}
