import type { Subprocess } from "bun";
import { dirname } from "node:path";
import { createLogger, formatLogLine, readLineBlocks, readLines } from "../core/log/index.ts";
import {
  CHILD_TMPDIR_ENV,
  OPERATOR_UMASK_ENV,
  raceTimeout,
  runInBackground,
  trackChild,
  type WorkerAccount,
} from "../core/process/index.ts";
import type { CommandMonitor } from "./monitor/commandMonitor.ts";
import { MONITOR_ENV, ROOT_WORKER_ENV } from "./monitor/monitorEnv.ts";
import { asWorkerUser } from "./workerSplit.ts";

// The supervisor's own lines: the worker's process is part of its job.
const log = createLogger("supervisor");

/** The worker as the supervisor runs it: its stdout and stderr piped to the supervisor's log. */
export type Worker = Subprocess<"ignore", "pipe", "pipe">;

/** Starts the worker: as the service user with the monitor behind its IPC channel when agentd split itself. */
export function spawnWorker(
  args: string[],
  restarts: number,
  operatorUmask: number,
  privateTmp: string,
  /** Takes the worker's whole lines as bytes, each ended by LF (readLineBlocks). */
  onLines: (pid: number) => (block: Uint8Array) => void,
  split: { monitor: CommandMonitor; account: WorkerAccount } | undefined,
  /** Started as root without the split: why the worker stays root, for /health and the page. */
  rootWorkerReason: string | undefined,
): Worker {
  const worker: Worker = trackChild(
    Bun.spawn(split ? asWorkerUser(args, split.account) : args, {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      // The service user may not enter the directory agentd was started in.
      ...(split ? { cwd: "/" } : {}),
      // Always a channel: the supervisor pushes the watchdog's counters (supervisorChannel.ts); a split
      // worker also asks its monitor here. An unsplit worker has nothing to ask: what it sends is dropped.
      serialization: "json" as const,
      ipc: (message: unknown) => {
        if (!split) return;
        runInBackground(
          "monitor.request",
          async () => {
            const reply = await split.monitor.handle(message);
            if (reply && worker.exitCode === null && worker.signalCode === null) worker.send(reply);
          },
          {},
          log,
        );
      },
      env: {
        // Bun's fetch allows 256 connections at once by default; the proxy holds one upstream
        // connection per open stream, so more concurrent streams would queue behind it.
        BUN_CONFIG_MAX_HTTP_REQUESTS: "4096",
        ...process.env,
        AGENTD_SUPERVISOR_PID: String(process.pid),
        // Bun unpacks a native addon embedded in the binary into TMPDIR and loads it from there (none
        // is embedded today: build/ssh2Trim.ts leaves ssh2's out), so never a directory the agent's
        // commands can write. Commands get the operator's TMPDIR back (withoutSecrets).
        TMPDIR: privateTmp,
        [CHILD_TMPDIR_ENV]: process.env.TMPDIR ?? "",
        AGENTD_WORKER_RESTARTS: String(restarts),
        [OPERATOR_UMASK_ENV]: operatorUmask.toString(8),
        // The service user's own home is the data dir it shares: its SSH files for hops are <data_dir>/.ssh, never root's.
        ...(split ? { [MONITOR_ENV]: "1", HOME: dirname(privateTmp), USER: split.account.user, LOGNAME: split.account.user } : {}),
        ...(rootWorkerReason ? { [ROOT_WORKER_ENV]: rootWorkerReason } : {}),
      },
    }),
  );
  const takeLines = onLines(worker.pid);
  const readFailed = (stream: string) => (error: unknown) => log.error("worker.pipe_error", { pid: worker.pid, stream, error });
  readLineBlocks(worker.stdout, takeLines, { onError: readFailed("stdout") }).catch(readFailed("stdout"));
  // Anything the worker writes to stderr (a crash before its logger exists) still lands in the log.
  readLines(
    worker.stderr,
    (line) =>
      takeLines(
        Buffer.from(
          `${formatLogLine({ ts: new Date().toISOString(), level: "error", component: "worker", event: "worker.stderr", pid: worker.pid, line })}\n`,
        ),
      ),
    { onError: readFailed("stderr") },
  ).catch(readFailed("stderr"));
  return worker;
}

/** SIGTERM, then SIGKILL after `graceMs`; says which ended it. */
export async function stopWorker(worker: Subprocess, graceMs: number): Promise<"SIGTERM" | "SIGKILL"> {
  worker.kill("SIGTERM");
  if ((await raceTimeout(worker.exited, graceMs)) === "timeout") {
    log.warn("worker.kill", { pid: worker.pid, grace_ms: graceMs });
    worker.kill("SIGKILL");
    await worker.exited;
    return "SIGKILL";
  }
  return "SIGTERM";
}
