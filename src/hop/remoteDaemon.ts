import type { Client } from "ssh2";
import type { Logger } from "../core/log/index.ts";
import { HopError } from "./hopErrors.ts";
import { runRemote, runRemoteChecked } from "./remoteCommand.ts";
import { shellQuote } from "./shellQuote.ts";

/** The remote worker's ready file, as the foundation writes it. */
export interface RemoteReady {
  pid: number;
  supervisor_pid: number | null;
  port: number;
  url: string;
  version: string;
}

export interface RemoteDaemonOptions {
  client: Client;
  binPath: string;
  dataDir: string;
  setsid: boolean;
  /** Stop a running remote agentd first (its binary was just replaced). */
  restart: boolean;
  readyTimeoutMs: number;
  commandTimeoutMs: number;
  log: Logger;
}

/** A running remote agentd and the bearer token its API requires (kept in memory only, never logged). */
export interface RemoteDaemon {
  ready: RemoteReady;
  token: string;
}

const POLL_MS = 200;
// ensureApiToken writes 32 random bytes as base64url; anything else is not a token file we can use.
const TOKEN = /^[A-Za-z0-9_-]{16,}$/;

function parseReady(text: string): RemoteReady | undefined {
  const line = text.split("\n").find((l) => l.startsWith("{"));
  if (!line) return undefined;
  try {
    const value = JSON.parse(line) as Partial<RemoteReady>;
    return typeof value.pid === "number" && typeof value.port === "number" ? (value as RemoteReady) : undefined;
  } catch {
    return undefined;
  }
}

/** Reads the ready file and whether its processes are alive, in one round trip. */
async function readRemoteReady(client: Client, dataDir: string, timeoutMs: number): Promise<{ ready?: RemoteReady; alive: boolean }> {
  const file = shellQuote(`${dataDir}/ready.json`);
  const out = (
    await runRemote(
      client,
      `cat ${file} 2>/dev/null; echo; p=$(sed -n 's/.*"supervisor_pid":\\([0-9]*\\).*/\\1/p' ${file} 2>/dev/null); w=$(sed -n 's/.*"pid":\\([0-9]*\\).*/\\1/p' ${file} 2>/dev/null); if [ -n "$w" ] && kill -0 "$w" 2>/dev/null && { [ -z "$p" ] || kill -0 "$p" 2>/dev/null; }; then echo alive=1; fi`,
      timeoutMs,
    )
  ).stdout;
  return { ready: parseReady(out), alive: /^alive=1$/m.test(out) };
}

/**
 * Reads `<dataDir>/token` over the exec channel. The caller keeps it in memory only: it is never
 * logged and never part of an error message.
 */
async function readRemoteToken(client: Client, dataDir: string, timeoutMs: number): Promise<string | undefined> {
  const out = (await runRemote(client, `cat ${shellQuote(`${dataDir}/token`)} 2>/dev/null`, timeoutMs)).stdout.trim();
  return TOKEN.test(out) ? out : undefined;
}

/** Stops the remote agentd named by its ready file: SIGTERM to the supervisor, SIGKILL after a grace. */
export async function stopRemoteDaemon(client: Client, dataDir: string, commandTimeoutMs: number): Promise<boolean> {
  const { ready, alive } = await readRemoteReady(client, dataDir, commandTimeoutMs);
  if (!ready || !alive) return false;
  const pid = ready.supervisor_pid ?? ready.pid;
  await runRemote(
    client,
    `kill -TERM ${pid} 2>/dev/null; i=0; while kill -0 ${pid} 2>/dev/null && [ $i -lt 100 ]; do sleep 0.2; i=$((i+1)); done; kill -KILL ${pid} 2>/dev/null; true`,
    commandTimeoutMs + 25_000,
  );
  return true;
}

/**
 * Makes sure an agentd runs on the remote host, bound to its loopback and requiring its bearer
 * token (other users of that host share its loopback), and returns its ready file and token. A
 * running one is reused unless `restart` or it has no token file (one started before hops
 * required the token); a new one is started detached (setsid, nohup) so it outlives this SSH
 * connection.
 */
export async function ensureRemoteDaemon(options: RemoteDaemonOptions): Promise<RemoteDaemon> {
  const { client, dataDir } = options;
  const current = await readRemoteReady(client, dataDir, options.commandTimeoutMs);
  if (current.ready && current.alive) {
    const token = options.restart ? undefined : await readRemoteToken(client, dataDir, options.commandTimeoutMs);
    if (token) return { ready: current.ready, token };
    if (!options.restart)
      options.log.warn("hop.remote_restarting", {
        pid: current.ready.pid,
        reason: "the running remote agentd has no token file, so it does not require one",
      });
    await stopRemoteDaemon(client, dataDir, options.commandTimeoutMs);
  }
  const detach = options.setsid ? "setsid nohup" : "nohup";
  const serve = `${shellQuote(options.binPath)} serve --bind 127.0.0.1 --port 0 --require-token --data-dir ${shellQuote(dataDir)}`;
  const out = await runRemoteChecked(
    client,
    `rm -f ${shellQuote(`${dataDir}/ready.json`)}; cd "$HOME" 2>/dev/null; ${detach} ${serve} </dev/null >/dev/null 2>&1 & echo "started=$!"`,
    options.commandTimeoutMs,
    "Starting the remote agentd",
  );
  const startedPid = Number(/started=(\d+)/.exec(out)?.[1]);
  options.log.info("hop.remote_starting", { pid: startedPid, data_dir: dataDir });
  const deadline = Date.now() + options.readyTimeoutMs;
  for (;;) {
    const state = await readRemoteReady(client, dataDir, options.commandTimeoutMs);
    if (state.ready && state.alive) {
      // The supervisor writes the token file before it starts the worker, so it is there by now.
      const token = await readRemoteToken(client, dataDir, options.commandTimeoutMs);
      if (!token) throw await startFailure(options, `it wrote no usable ${dataDir}/token`);
      return { ready: state.ready, token };
    }
    const running = await runRemote(client, `kill -0 ${startedPid} 2>/dev/null && echo running=1`, options.commandTimeoutMs);
    if (!/running=1/.test(running.stdout)) throw await startFailure(options, `it exited right after starting`);
    if (Date.now() >= deadline) {
      await runRemote(client, `kill -TERM ${startedPid} 2>/dev/null`, options.commandTimeoutMs).catch(() => undefined);
      throw await startFailure(options, `it did not write ${dataDir}/ready.json within ${options.readyTimeoutMs} ms`);
    }
    await Bun.sleep(POLL_MS);
  }
}

async function startFailure(options: RemoteDaemonOptions, why: string): Promise<HopError> {
  const log = await runRemote(
    options.client,
    `tail -n 5 ${shellQuote(`${options.dataDir}/logs/agentd.log`)} 2>/dev/null`,
    options.commandTimeoutMs,
  ).catch(() => undefined);
  const tail = log?.stdout.trim();
  return new HopError("hop_remote_start_failed", `The remote agentd did not start: ${why}${tail ? `; its log ends with: ${tail}` : ""}`);
}
