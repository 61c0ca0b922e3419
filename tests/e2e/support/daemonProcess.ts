import type { Subprocess } from "bun";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseLogLine, readLines, type LogRecord } from "../../../src/core/log/index.ts";
import { spawnAgentd, stopChild } from "../../support/binary.ts";
import { daemonToken, rememberDaemonToken } from "../../support/daemonTokens.ts";
import { GiveUp, isProcessAlive, waitFor } from "../../support/waitFor.ts";

/** `agentd serve` (supervisor + worker) started from the compiled binary, with its log lines gathered. */
export interface DaemonProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  dataDir: string;
  configPath: string;
  /** The worker's URL once it listens (updated after a restart). */
  url: string;
  /** Every JSON log line the supervisor printed, in order (worker lines included). */
  lines: LogRecord[];
  /** Everything the supervisor wrote to stderr. */
  stderr(): string;
  /** The pid of the worker currently running. */
  workerPid(): number;
  /** Waits for a log line matching `predicate` among the lines from index `after` on. */
  waitForLine(predicate: (record: LogRecord) => boolean, after?: number, timeoutMs?: number): Promise<LogRecord>;
  /** Kills the worker with SIGKILL and waits until the supervisor's new worker listens again. */
  killWorker(): Promise<void>;
  /** SIGTERM to the supervisor (SIGKILL past the grace), then SIGKILL to any worker left behind. */
  stop(): Promise<void>;
}

export interface DaemonOptions {
  dataDir: string;
  /** Written as `<dataDir>/agentd.jsonc` (JSON is valid JSONC). */
  config: Record<string, unknown>;
  env?: Record<string, string | undefined>;
  /** Another copy of the binary to run (default: the tests' own). */
  binary?: string;
}

/** Starts `agentd serve --port 0 --data-dir D --config D/agentd.jsonc` and waits until its worker listens. */
export async function startDaemon(options: DaemonOptions): Promise<DaemonProcess> {
  const configPath = join(options.dataDir, "agentd.jsonc");
  writeFileSync(configPath, JSON.stringify(options.config, null, 2));
  const proc = await spawnAgentd(["serve", "--port", "0", "--data-dir", options.dataDir, "--config", configPath], {
    env: options.env,
    ...(options.binary ? { binary: options.binary } : {}),
  });
  const lines: LogRecord[] = [];
  let stderrText = "";
  void readLines(proc.stdout, (line) => {
    const record = parseLogLine(line);
    if (record) lines.push(record);
  });
  void readLines(proc.stderr, (line) => {
    stderrText += `${line}\n`;
  });
  const workers = new Set<number>();
  const waitForLine = (predicate: (record: LogRecord) => boolean, after = 0, timeoutMs = 60_000) =>
    waitFor(
      "a log line",
      () => {
        if (proc.exitCode !== null) throw new GiveUp(`agentd serve exited ${proc.exitCode}: ${stderrText}${lastLines(lines)}`);
        return lines.slice(after).find(predicate);
      },
      { timeoutMs },
    );
  const daemon: DaemonProcess = {
    proc,
    dataDir: options.dataDir,
    configPath,
    url: "",
    lines,
    stderr: () => stderrText,
    workerPid() {
      const spawned = lines.filter((r) => r.event === "worker.spawned");
      const pid = spawned.at(-1)?.pid;
      if (typeof pid !== "number") throw new Error("no worker.spawned line yet");
      workers.add(pid);
      return pid;
    },
    waitForLine,
    async killWorker() {
      const pid = daemon.workerPid();
      const mark = lines.length;
      process.kill(pid, "SIGKILL");
      const listening = await waitForLine((r) => r.event === "http.listening", mark);
      daemon.url = String(listening.url);
      daemon.workerPid();
      rememberDaemonToken(daemon.url, options.dataDir);
    },
    async stop() {
      for (const record of lines) if (record.event === "worker.spawned" && typeof record.pid === "number") workers.add(record.pid);
      await stopChild(proc, 20_000);
      for (const pid of workers) if (isProcessAlive(pid)) process.kill(pid, "SIGKILL");
    },
  };
  try {
    const listening = await waitForLine((r) => r.event === "http.listening");
    daemon.url = String(listening.url);
    daemon.workerPid();
    rememberDaemonToken(daemon.url, options.dataDir);
  } catch (error) {
    await daemon.stop();
    throw error;
  }
  return daemon;
}

/** The last log lines, for the message of a daemon that exited while a test waited on it. */
function lastLines(lines: LogRecord[]): string {
  return lines.length === 0
    ? ""
    : `\nlast log lines:\n${lines
        .slice(-8)
        .map((r) => JSON.stringify(r))
        .join("\n")}`;
}

export interface SseEvent {
  id: number;
  type: string;
  data: Record<string, any>;
}

/** The events of a whole Server-Sent Events body (comments and heartbeats skipped). */
export function parseSseEvents(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let type = "message";
    let id = NaN;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith("event:")) type = line.slice(6).trim();
      else if (line.startsWith("id:")) id = Number(line.slice(3).trim());
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    if (data.length > 0) events.push({ id, type, data: JSON.parse(data.join("\n")) as Record<string, any> });
  }
  return events;
}

/** The headers a person's request to the daemon at `url` carries: its token, when it has one. */
export function personHeaders(url: string, headers: Record<string, string> = {}): Record<string, string> {
  const token = daemonToken(url);
  return token && !headers.authorization ? { ...headers, authorization: `Bearer ${token}` } : headers;
}

/** A JSON request to the daemon; throws with the body when the status is not the expected one. */
export async function api<T = any>(url: string, path: string, init: { method?: string; body?: unknown; expect?: number } = {}): Promise<T> {
  const response = await fetch(url + path, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: personHeaders(url, init.body === undefined ? {} : { "content-type": "application/json" }),
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  const expected = init.expect ?? (response.ok ? response.status : 200);
  if (response.status !== expected)
    throw new Error(`${init.method ?? "GET"} ${path} answered ${response.status} (expected ${expected}): ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}
