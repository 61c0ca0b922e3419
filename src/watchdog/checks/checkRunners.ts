import { readdirSync, readFileSync, statfsSync } from "node:fs";
import { createConnection } from "node:net";
import { errorMessage } from "../../core/errors/index.ts";
import type { CheckConfig } from "../../core/config/sections/watchdogConfig.ts";
import { runCommand } from "../../core/process/index.ts";
import { redactText } from "../../core/redaction/index.ts";

export interface CheckOutcome {
  ok: boolean;
  detail: string;
}

export interface CheckContext {
  /** The worker's pid for the memory check; undefined while it is down. */
  workerPid: () => number | undefined;
  /** Configured secrets: hidden by value in what a check printed, which the page shows. */
  secrets?: readonly (string | undefined)[];
}

/** Runs one configured check once. Never throws: a failure to check is a failed check. */
export async function runCheck(check: CheckConfig, context: CheckContext): Promise<CheckOutcome> {
  try {
    switch (check.type) {
      case "http":
        return await httpCheck(check.url, check.expect_status, check.expect_body, check.timeout_ms);
      case "tcp":
        return await tcpCheck(check.host, check.port, check.timeout_ms);
      case "command":
        return await commandCheck(check.argv, check.expect_exit, check.timeout_ms);
      case "process":
        return processCheck(check.process_name, check.pidfile);
      case "disk":
        return diskCheck(check.path, check.min_free_percent);
      case "memory":
        return memoryCheck(context.workerPid(), check.max_worker_rss_mb);
    }
  } catch (error) {
    return { ok: false, detail: errorMessage(error) };
  }
}

async function httpCheck(url: string, expectStatus: number, expectBody: string | undefined, timeoutMs: number): Promise<CheckOutcome> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
  const body = await response.text();
  if (response.status !== expectStatus) return { ok: false, detail: `HTTP ${response.status}, expected ${expectStatus}` };
  if (expectBody !== undefined && !new RegExp(expectBody).test(body)) return { ok: false, detail: `body does not match /${expectBody}/` };
  return { ok: true, detail: `HTTP ${response.status}` };
}

function tcpCheck(host: string, port: number, timeoutMs: number): Promise<CheckOutcome> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const finish = (outcome: CheckOutcome) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ ok: false, detail: `no connection to ${host}:${port} within ${timeoutMs} ms` }), timeoutMs);
    socket.once("connect", () => finish({ ok: true, detail: `connected to ${host}:${port}` }));
    socket.once("error", (error) => finish({ ok: false, detail: `${host}:${port}: ${error.message}` }));
  });
}

async function commandCheck(argv: string[], expectExit: number, timeoutMs: number): Promise<CheckOutcome> {
  // Runs unasked on a timer: confined, like the agent's commands (it may read what they wrote).
  const result = await runCommand({ argv, timeoutMs, maxOutputBytes: 2048, confined: true });
  if (result.timed_out) return { ok: false, detail: `${argv[0]} timed out after ${timeoutMs} ms` };
  if (result.signal) return { ok: false, detail: `${argv[0]} ended by ${result.signal}` };
  const code = result.exit_code;
  // Redacted before it is cut: a secret cut in half would no longer look like one.
  const said = redactText(result.output.trim()).slice(-200);
  return code === expectExit
    ? { ok: true, detail: `exit ${code}` }
    : { ok: false, detail: `exit ${code}, expected ${expectExit}${said ? `: ${said}` : ""}` };
}

function processCheck(name: string | undefined, pidfile: string | undefined): CheckOutcome {
  if (pidfile) {
    const pid = Number(readFileSync(pidfile, "utf8").trim());
    if (!Number.isInteger(pid) || pid <= 0) return { ok: false, detail: `${pidfile} holds no pid` };
    try {
      process.kill(pid, 0);
      return { ok: true, detail: `pid ${pid} alive` };
    } catch {
      return { ok: false, detail: `pid ${pid} from ${pidfile} is not running` };
    }
  }
  if (!name) return { ok: false, detail: "process check needs process_name or pidfile" };
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === name) return { ok: true, detail: `${name} running as pid ${entry}` };
    } catch {
      // The process ended while we looked.
    }
  }
  return { ok: false, detail: `no process named ${name}` };
}

function diskCheck(path: string, minFreePercent: number): CheckOutcome {
  const stats = statfsSync(path);
  const freePercent = (Number(stats.bavail) / Number(stats.blocks)) * 100;
  const detail = `${freePercent.toFixed(1)}% free on ${path}`;
  return { ok: freePercent >= minFreePercent, detail: freePercent >= minFreePercent ? detail : `${detail}, below ${minFreePercent}%` };
}

/** Resident memory of a process in MiB from /proc/<pid>/status. */
function residentMemoryMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : 0;
}

function memoryCheck(pid: number | undefined, maxMb: number): CheckOutcome {
  if (pid === undefined) return { ok: true, detail: "worker not running" };
  const rss = residentMemoryMb(pid);
  return { ok: rss <= maxMb, detail: `worker RSS ${rss.toFixed(0)} MiB (limit ${maxMb} MiB)` };
}
