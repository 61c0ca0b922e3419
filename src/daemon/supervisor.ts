import { mkdirSync } from "node:fs";
import { join } from "node:path";
// Neither the schemas nor zod: the config comes from a child as plain JSON (configHandoff.ts).
import { resolveDataDir } from "../core/config/dataDir.ts";
import { NO_CONFIG_SEARCH_ENV } from "../core/config/configSearch.ts";
import type { AgentdConfig } from "../core/config/schema.ts";
import { configSecretValues } from "../core/config/secretValues.ts";
import { createLogger, eachLine, parseLogLine, setLogLevel, type LogLevel } from "../core/log/index.ts";
import { recordEvent } from "../core/store/index.ts";
// The two files alone: the watchdog's index also brings its routes, tools and config schema (zod).
import { RestartPolicy } from "../watchdog/actions/restartPolicy.ts";
import { WatchdogRuntime } from "../watchdog/watchdogRuntime.ts";
import { peekEventName } from "../watchdog/checks/signatureMatcher.ts";
// The file alone: the telemetry index also brings its config schema (zod).
import { startTracing } from "../telemetry/tracing.ts";
import { selfCommand } from "./selfCommand.ts";
import { serveArgs, type ServeOptions } from "./serveOptions.ts";
import { crashLoopSignal, workerCrashSignal } from "./crashLoopIncident.ts";
import {
  type CommandIdentity,
  confineOwnCommands,
  type Hardening,
  hardenProcess,
  raceTimeout,
  resolveCommandIdentity,
  runInBackground,
  scheduleCodeRelease,
} from "../core/process/index.ts";
import { AgentdError } from "../core/errors/index.ts";
// The registry file alone: the PTY capability (FFI, sessions) has no place in the supervisor.
import { killOrphanedPtyGroups, PTY_GROUPS_DIR } from "../pty/ptyGroupRegistry.ts";
import { planWorkerSplit, shareDataDir } from "./workerSplit.ts";
import { openSupervisorState, type Privileges } from "./supervisorState.ts";
import { countersPush, type CountersPush } from "./supervisorChannel.ts";
import { spawnWorker, stopWorker, type Worker } from "./workerProcess.ts";
import { startMonitor } from "./monitor/startMonitor.ts";
import { claimDataDir } from "./dataDirLock.ts";
import { loadConfigInChild } from "./configHandoff.ts";
import { removeStaleReadyFile, removeSupervisorReadyFile } from "./readyFile.ts";

const log = createLogger("supervisor");
/** How a worker's line naming the listening event reads, as its logger writes it. */
const LISTENING_EVENT = '"event":"http.listening"';

/**
 * `agentd serve`: runs the worker as a child, copies its log lines to stdout and the rotating
 * log file, restarts it with backoff when it dies, runs the watchdog over it, and stops it
 * gracefully on SIGTERM/SIGINT. `jitProblem`: why the supervisor could not exec itself without the
 * optimizing JIT (supervisorJit.ts), logged once its log is open.
 */
export async function runSupervisor(options: ServeOptions, jitProblem?: string): Promise<number> {
  const hardening = hardenProcess();
  const loaded = await loadConfigInChild(options);
  if ("exitCode" in loaded) return loaded.exitCode;
  const { config } = loaded;
  // The file found at start is the one read from now on (reloads, restarted workers): a later
  // search could find one a command wrote in ~/.config/agentd or the working directory.
  const pinned: ServeOptions = loaded.path ? { ...options, configPath: loaded.path } : options;
  if (!loaded.path) process.env[NO_CONFIG_SEARCH_ENV] = "1";
  setLogLevel(options.logLevel ?? (config.log.level as LogLevel));
  const dataDir = resolveDataDir({ flag: options.dataDir, config });
  // Before anything in the data dir is touched: a second `serve` on it must change nothing there.
  const claim = claimDataDir(dataDir);
  if ("refusal" in claim) {
    process.stderr.write(`agentd: ${claim.refusal}\n`);
    return 2;
  }
  removeStaleReadyFile(dataDir);
  // Started as root, the command user is made here, before the worker looks it up.
  let identity: CommandIdentity;
  try {
    identity = resolveCommandIdentity(config.pty.run_as, {
      binary: process.execPath,
      dataDir,
      ...(loaded.path ? { config: loaded.path } : {}),
    });
  } catch (error) {
    if (!(error instanceof AgentdError)) throw error;
    process.stderr.write(`agentd: ${error.message}\n`);
    claim.lock.release();
    return 2;
  }
  // Watchdog checks run unasked and may read what the agent's commands wrote: they run as the command user too.
  confineOwnCommands(identity, {
    withheld: loaded.envReferences,
    pass: config.pty.pass_env,
    secretValues: configSecretValues(config, loaded.envReferences, process.env),
  });
  // Started as root, the worker runs as a service user and this process stays its monitor.
  const split = planWorkerSplit(
    config,
    identity,
    { binary: process.execPath, dataDir, ...(loaded.path ? { config: loaded.path } : {}) },
    options.port ?? config.server.port,
  );
  try {
    return await supervise(
      pinned,
      config,
      dataDir,
      hardening,
      { identity, split, ...(loaded.path ? { configPath: loaded.path } : {}) },
      jitProblem,
    );
  } finally {
    removeSupervisorReadyFile(dataDir, process.pid);
    claim.lock.release();
  }
}

async function supervise(
  options: ServeOptions,
  initialConfig: AgentdConfig,
  dataDir: string,
  hardening: Hardening,
  privileges: Privileges,
  jitProblem: string | undefined,
): Promise<number> {
  // Replaced by a reload: the watchdog's checks, rules and graces follow it; the restart policy keeps its limits.
  let config = initialConfig;
  const opened = await openSupervisorState(options, config, dataDir, hardening, privileges);
  if ("exitCode" in opened) return opened.exitCode;
  const { db, writeBlock, account, token, monitorToken } = opened;

  const policy = new RestartPolicy({
    maxRestarts: config.supervisor.restart_max,
    windowMs: config.supervisor.restart_window_s * 1000,
    initialBackoffMs: config.supervisor.backoff_initial_ms,
    maxBackoffMs: config.supervisor.backoff_max_ms,
    healthyResetMs: config.supervisor.healthy_reset_s * 1000,
  });
  const stopRequested = Promise.withResolvers<string>();
  const onSignal = (signal: NodeJS.Signals) => stopRequested.resolve(signal);
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);

  let current: Worker | undefined;
  let requestReload = () => log.warn("config.reload_deferred", { reason: "the supervisor is still starting" });
  const monitor = account
    ? await startMonitor({
        identity: privileges.identity,
        account,
        config,
        db,
        dataDir,
        ...(privileges.configPath ? { configPath: privileges.configPath } : {}),
        ...(monitorToken ? { token: monitorToken } : {}),
        workerPid: () => current?.pid,
        reload: () => requestReload(),
        log: log.child("monitor"),
      })
    : undefined;
  if (account) log.info("security.worker_user", { user: account.user, uid: account.uid });
  // Exits the watchdog asked for: the worker is restarted, but its exit is not a new crash.
  const requestedExits = new Set<number>();
  // The supervisor's own tracer (the watchdog runs here): loaded only when a collector is configured.
  const tracing = await startTracing(config.telemetry, "supervisor", log.child("telemetry"));
  const createWatchdog = (next: AgentdConfig) =>
    new WatchdogRuntime({
      config: next.watchdog,
      alerts: next.alerts,
      providers: next.providers,
      tracer: tracing.tracer,
      db,
      log: log.child("watchdog"),
      publish: (counters) => pushToWorker(current, countersPush(counters)),
      token,
      // Every configured secret (keys, webhook and collector headers) is redacted by value before the model or the page.
      secrets: configSecretValues(next, [], process.env),
      workerPid: () => (current && current.exitCode === null && current.signalCode === null ? current.pid : undefined),
      restartWorker: async (reason, pid) => {
        const worker = current;
        if (!worker || worker.exitCode !== null || worker.signalCode !== null)
          return "the worker is down; the supervisor's restart policy starts it again";
        if (pid !== undefined && worker.pid !== pid)
          return `worker ${pid} is already gone; ${worker.pid} was started since and is left alone`;
        requestedExits.add(worker.pid);
        log.warn("worker.restart", { pid: worker.pid, reason });
        // A hung worker ignores SIGTERM: the grace stays short, and endTerminals ends what it leaves.
        const how = await stopWorker(worker, config.watchdog.restart_grace_ms);
        return `worker ${worker.pid} stopped (${how}); the supervisor starts a new one`;
      },
    });
  let watchdog = createWatchdog(config);
  watchdog.start();

  // After the first start the worker keeps its port across restarts, even when asked for port 0.
  let port = options.port;
  let listening: { url: string; pid: number } | undefined;
  let startReleaseScheduled = false;
  const noteListening = (pid: number, line: string) => {
    // Only one event matters here: the others are not parsed.
    const record = peekEventName(line) === "http.listening" ? parseLogLine(line) : undefined;
    if (record && typeof record.port === "number") {
      port = record.port;
      if (typeof record.url === "string") {
        // Once, when the first worker is up: the supervisor's own start is over by then.
        if (!startReleaseScheduled) scheduleCodeRelease(log, "start");
        startReleaseScheduled = true;
        listening = { url: record.url, pid };
        watchdog.workerListening(record.url, pid);
      }
    }
  };
  // The lines go out as they came; decoded once per read (as readLines does), the watchdog takes
  // them a read at a time, and only a read that names the listening event is gone through line by line.
  const onWorkerLines = (pid: number) => {
    const decoder = new TextDecoder();
    const pipeError = (error: unknown) => log.error("worker.pipe_error", { pid, stream: "stdout", error });
    return (block: Uint8Array) => {
      writeBlock(block);
      const text = decoder.decode(block, { stream: true });
      try {
        if (text.includes(LISTENING_EVENT)) eachLine(text, (line) => noteListening(pid, line), pipeError);
        watchdog.ingestBlock(text);
      } catch (error) {
        pipeError(error);
      }
    };
  };
  // Terminals of a worker that could not close them (SIGKILL, a crash) have no reader any more. The
  // monitor started a split worker's commands itself: it ends exactly those, not what a file in the
  // worker's data dir lists.
  const endTerminals = async (workerPid: number) => {
    try {
      const orphans = monitor ? await monitor.workerGone() : killOrphanedPtyGroups(join(dataDir, PTY_GROUPS_DIR));
      if (orphans.length > 0) log.warn("pty.orphans_killed", { worker_pid: workerPid, process_groups: orphans });
    } catch (error) {
      log.error("pty.orphans_failed", { worker_pid: workerPid, error });
    }
  };
  // SIGHUP: the config is checked in a child first; an invalid file changes nothing here and the
  // worker, reading the same file, keeps its config and shows why. Reloads run one at a time.
  let reloading = Promise.resolve();
  const reloadConfig = async () => {
    const loaded = await loadConfigInChild(options);
    if ("exitCode" in loaded) {
      log.error("config.reload_failed", { exit_code: loaded.exitCode });
    } else {
      // The watchdog's state (incidents, check streaks) is in the store: a new runtime adopts it
      // without reopening anything, as after a restart.
      await watchdog.stop();
      config = loaded.config;
      monitor?.reload(config.pty, config.approvals);
      watchdog = createWatchdog(config);
      watchdog.start();
      if (listening && current?.pid === listening.pid && current.exitCode === null) watchdog.workerListening(listening.url, listening.pid);
      log.info("config.reloaded", { file: loaded.path ?? null });
    }
    // The worker re-reads the file itself (providers, approval policy) and keeps every connection.
    if (current && current.exitCode === null && current.signalCode === null) current.kill("SIGHUP");
  };
  const onReload = () => {
    log.info("config.reload_requested", { pid: process.pid });
    reloading = reloading.then(() => runInBackground("config.reload", reloadConfig, {}, log).done);
  };
  process.on("SIGHUP", onReload);
  requestReload = onReload;
  const privateTmp = join(dataDir, "tmp");
  mkdirSync(privateTmp, { recursive: true, mode: 0o700 });
  let restarts = 0;
  let exitCode = 0;
  log.info("supervisor.start", { pid: process.pid, data_dir: dataDir });
  if (jitProblem) log.warn("supervisor.optimizing_jit_kept", { problem: jitProblem });
  for (;;) {
    const startedAt = Date.now();
    const workerArgs = [...selfCommand(), "serve", "--worker", ...serveArgs({ ...options, dataDir, port })];
    if (account)
      shareDataDir(dataDir, account, { binary: process.execPath, ...(privileges.configPath ? { config: privileges.configPath } : {}) });
    const worker = spawnWorker(
      workerArgs,
      restarts,
      hardening.operatorUmask,
      privateTmp,
      onWorkerLines,
      monitor && account ? { monitor, account } : undefined,
      "problem" in privileges.split && privileges.identity.mode === "command_user" ? privileges.split.problem : undefined,
    );
    current = worker;
    log.info("worker.spawned", { pid: worker.pid, restarts });
    const outcome = await Promise.race([
      worker.exited.then((code) => ({ kind: "exit" as const, code })),
      stopRequested.promise.then((signal) => ({ kind: "stop" as const, signal })),
    ]);
    watchdog.workerGone();
    listening = undefined;
    if (outcome.kind === "stop") {
      log.info("supervisor.stopping", { signal: outcome.signal, worker_pid: worker.pid });
      await stopWorker(worker, config.supervisor.stop_grace_ms);
      await endTerminals(worker.pid);
      break;
    }
    const fields = {
      pid: worker.pid,
      code: outcome.code,
      signal: worker.signalCode ? String(worker.signalCode) : null,
      uptime_ms: Date.now() - startedAt,
    };
    const requested = requestedExits.delete(worker.pid);
    log.warn("worker.exit", { ...fields, requested });
    await endTerminals(worker.pid);
    // A store another process holds locked (a worker hung inside a write) must not stop the supervisor.
    try {
      recordEvent(db, { component: "supervisor", event: "worker.exit", level: "warn", fields });
    } catch (error) {
      log.error("store.write_failed", { event: "worker.exit", error });
    }
    // Exit 0 without a request is an operator stopping the worker by hand: not an incident.
    if (!requested && (outcome.code !== 0 || worker.signalCode))
      runInBackground("watchdog.report", () => watchdog.report(workerCrashSignal(fields)), { pid: worker.pid }, log);
    const decision = policy.onExit(Date.now(), startedAt);
    if (decision.action === "give_up") {
      const reason = `worker exited ${decision.restartsInWindow + 1} times within ${config.supervisor.restart_window_s}s; not restarting (last exit code ${outcome.code}${worker.signalCode ? `, signal ${worker.signalCode}` : ""})`;
      log.error("supervisor.crash_loop", { restarts: decision.restartsInWindow, reason });
      await watchdog.report(crashLoopSignal(reason, decision.restartsInWindow));
      exitCode = 1;
      break;
    }
    restarts++;
    log.info("worker.restart_scheduled", { attempt: decision.attempt, delay_ms: decision.delayMs, restarts });
    if ((await raceTimeout(stopRequested.promise, decision.delayMs)) !== "timeout") break;
  }
  process.off("SIGTERM", onSignal);
  process.off("SIGINT", onSignal);
  process.off("SIGHUP", onReload);
  await reloading;
  await watchdog.stop();
  await monitor?.close();
  await tracing.shutdown();
  log.info("supervisor.stopped", { exit_code: exitCode });
  db.close();
  return exitCode;
}

/** A push to the worker on their IPC channel; one that is exiting misses it (the next gets the counters when it listens). */
function pushToWorker(worker: Worker | undefined, push: CountersPush): void {
  if (!worker || worker.exitCode !== null || worker.signalCode !== null) return;
  try {
    worker.send(push);
  } catch (error) {
    log.debug("worker.push_missed", { pid: worker.pid, push: push.push, error });
  }
}
