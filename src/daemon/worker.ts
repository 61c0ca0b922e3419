import type { Server } from "bun";
import { loadConfig, resolveDataDir } from "../core/config/index.ts";
import { createLogger, setLogLevel, type LogLevel } from "../core/log/index.ts";
import { openStore } from "../core/store/index.ts";
import { ensureApiToken, UntrustedTokenError } from "../http/token.ts";
import { ClientConnections } from "../http/clientConnections.ts";
import { withConnectionLimits } from "../http/connectionLimits.ts";
import { VERSION } from "../core/version.ts";
import { allMigrations } from "./allMigrations.ts";
import {
  confineOwnCommands,
  hardenProcess,
  installProcessErrorHandlers,
  raceTimeout,
  resolveCommandIdentity,
  runConfinedCommandsWith,
  runInBackground,
  scheduleCodeRelease,
} from "../core/process/index.ts";
import { judgeEscalationsAs } from "../agent/index.ts";
import { MONITOR_ENV, ROOT_WORKER_ENV } from "./monitor/monitorEnv.ts";
import { SupervisorChannel } from "./supervisorChannel.ts";
import {
  MonitorClient,
  MonitorLauncher,
  monitorConfigText,
  monitorFiles,
  monitorIdentity,
  monitorRunner,
} from "./monitor/monitorClient.ts";
import { openCommandCgroups } from "./commandCgroups.ts";
import { removeReadyFile, writeReadyFile } from "./readyFile.ts";
import { tokenRequired, type ServeOptions } from "./serveOptions.ts";
import { createWorkerApp } from "./workerApp.ts";
import { restrictDataDir } from "./dataDirAccess.ts";
import { WorkerConfigReload } from "./configReload.ts";
import { createReloadRoutes } from "./reloadRoutes.ts";
import { socketHandlers, type SocketSession } from "../proxy/index.ts";

const log = createLogger("worker");

/** The worker: owns the HTTP server and the sessions; runs until SIGTERM, then drains. */
export async function runWorker(options: ServeOptions): Promise<number> {
  // Started by a root supervisor as its service user: what needs root, the monitor does.
  const monitor = process.env[MONITOR_ENV] === "1" ? new MonitorClient(log.child("monitor")) : undefined;
  // Started by a supervisor (not by hand, not by a test): its pushes arrive on the IPC channel.
  const supervisor = process.send ? new SupervisorChannel() : undefined;
  try {
    return await serveWorker(options, monitor, supervisor);
  } finally {
    // The channel keeps the process alive: a worker that stopped (or could not listen) must exit.
    monitor?.close();
    supervisor?.close();
  }
}

async function serveWorker(
  options: ServeOptions,
  monitor: MonitorClient | undefined,
  supervisor: SupervisorChannel | undefined,
): Promise<number> {
  const hardening = hardenProcess();
  installProcessErrorHandlers(log);
  // SIGHUP's default ends the process: a reload the supervisor forwards before the app exists waits.
  let onReload = () => log.warn("config.reload_deferred", { reason: "the worker is still starting" });
  const reloadRequested = () => onReload();
  process.on("SIGHUP", reloadRequested);
  if (hardening.problem) log.warn("process.dumpable", { problem: hardening.problem });
  const configText = monitor ? await monitorConfigText(monitor) : undefined;
  const {
    config,
    notes,
    envReferences,
    path: configPath,
  } = loadConfig({
    explicitPath: options.configPath,
    ...(configText === undefined ? {} : { text: configText }),
  });
  setLogLevel(options.logLevel ?? (config.log.level as LogLevel));
  const dataDir = resolveDataDir({ flag: options.dataDir, config });
  const bind = options.bind ?? config.server.bind;
  const port = options.port ?? config.server.port;
  const startedAt = Date.now();
  const supervisorPid = Number(process.env.AGENTD_SUPERVISOR_PID) || null;
  const restarts = Number(process.env.AGENTD_WORKER_RESTARTS) || 0;
  // A monitored worker's data dir is root's, shared with it: the supervisor set it up.
  const restrictProblem = monitor ? undefined : restrictDataDir(dataDir);
  if (restrictProblem) log.warn("data_dir.permissions", { data_dir: dataDir, problem: restrictProblem });
  // The store holds approvals and grants: a command that could write it could approve itself.
  // Its own /proc entries too (/proc/self resolves there): the file tools never write to agentd itself.
  const ownPaths = [
    dataDir,
    ...(configPath ? [configPath] : []),
    process.execPath,
    `/proc/${process.pid}`,
    ...(supervisorPid ? [`/proc/${supervisorPid}`] : []),
  ];
  // The supervisor has made the command user already; a failure here is one it reported and exited on.
  const identity = monitor
    ? await monitorIdentity(monitor)
    : resolveCommandIdentity(config.pty.run_as, {
        binary: process.execPath,
        dataDir,
        ...(configPath ? { config: configPath } : {}),
      });
  // Started as root without the split, the worker is root: the gate holds for commands, but say so.
  const rootWorker = process.env[ROOT_WORKER_ENV];
  if (rootWorker && identity.mode === "command_user")
    identity.limits = `the worker runs as root, not as the service user: ${rootWorker}; a monitor and a worker of its own need the binary and the data dir where the service user can reach them (README: Security model)`;
  if (identity.problems.length > 0) log.warn("security.gate_open", { mode: identity.mode, problems: identity.problems });
  else log.info("security.gate_holds", { mode: identity.mode, user: identity.user });
  confineOwnCommands(identity, { withheld: envReferences, pass: config.pty.pass_env });
  if (monitor) {
    runConfinedCommandsWith(monitorRunner(monitor, log));
    // Escalations are the monitor's, which runs them as root: judged as root's, as it judges them again.
    judgeEscalationsAs({ user: "root", uid: 0 });
    log.info("security.worker_user", { uid: process.getuid?.() ?? null, monitor_pid: supervisorPid });
  }
  const cgroups = monitor ? undefined : openCommandCgroups(log);
  const db = openStore({ path: `${dataDir}/agentd.db`, migrations: allMigrations });
  const workerIds = monitor ? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 } : undefined;
  let requiredToken: string | undefined;
  // Guarded, decisions also need the token, which lives where commands cannot read; in namespaces,
  // where commands share agentd's uid, direct calls need it too.
  let decisionToken: string | undefined;
  try {
    requiredToken = (await tokenRequired(bind, options.requireToken ?? config.server.require_token))
      ? ensureApiToken(dataDir, workerIds).token
      : undefined;
    decisionToken = identity.mode !== "unguarded" ? ensureApiToken(dataDir, workerIds).token : undefined;
  } catch (error) {
    if (!(error instanceof UntrustedTokenError)) throw error;
    log.error("auth.token_untrusted", { problem: error.message });
    db.close();
    return 2;
  }

  let reload: WorkerConfigReload | undefined;
  // The service user may not signal its root supervisor: it asks through the monitor's channel.
  const askSupervisor = monitor
    ? () => runInBackground("config.reload_request", () => monitor.request({ op: "reload" }), {}, log)
    : supervisorPid
      ? () => process.kill(supervisorPid, "SIGHUP")
      : undefined;
  const { fetch: appFetch, services } = await createWorkerApp({
    config,
    notes,
    ...(supervisor ? { watchdogCounters: () => supervisor.watchdogCounters } : {}),
    envReferences,
    childUmask: hardening.operatorUmask,
    ownPaths,
    identity,
    ...(cgroups ? { cgroups } : {}),
    ...(decisionToken ? { decisionToken } : {}),
    ...(identity.mode === "namespaces" && decisionToken ? { directCallToken: decisionToken } : {}),
    ...(identity.credentials ? { commandUid: identity.credentials.uid } : {}),
    ...(monitor ? { monitored: { launcher: new MonitorLauncher(monitor, log.child("pty")), files: monitorFiles(monitor) } } : {}),
    db,
    dataDir,
    logger: log,
    requiredToken,
    startedAt,
    supervisorPid,
    restarts,
    extraMounts: [{ path: "/api/admin/reload", app: createReloadRoutes({ reloader: () => reload, askSupervisor }), loopbackOnly: true }],
  });

  let server: Server<SocketSession>;
  try {
    // The port is known once listening: the connection count reads the kernel's table for it.
    const connections = new ClientConnections(port);
    const limits = {
      idleTimeoutS: config.server.idle_timeout_s,
      maxPerClient: config.server.max_connections_per_client,
      connections,
      // The operator (who has the token) is never refused for connections a command holds on loopback.
      token: requiredToken ?? decisionToken,
    };
    server = Bun.serve({
      hostname: bind,
      port,
      fetch: withConnectionLimits((request, bunServer) => appFetch(request, bunServer), limits),
      idleTimeout: config.server.idle_timeout_s,
      // The Responses API's WebSocket (GET /v1/responses), upgraded by its route after agentd's checks.
      websocket: socketHandlers,
    });
    connections.listenOn(server.port!);
  } catch (error) {
    log.error("http.listen_failed", {
      bind,
      port,
      error,
      cause: (error as { code?: string }).code === "EADDRINUSE" ? "port_in_use" : "listen",
    });
    await services.close();
    await cgroups?.closeAll();
    db.close();
    return 1;
  }
  const url = `http://${bind.includes(":") ? `[${bind}]` : bind}:${server.port}`;
  writeReadyFile(dataDir, {
    pid: process.pid,
    supervisor_pid: supervisorPid,
    bind,
    port: server.port!,
    url,
    version: VERSION,
    started_at: new Date(startedAt).toISOString(),
  });
  log.info("http.listening", { bind, port: server.port, url, auth: requiredToken ? "bearer" : "loopback" });
  scheduleCodeRelease(log, "start");
  reload = new WorkerConfigReload({
    configPath: options.configPath,
    notes,
    target: services,
    logger: log,
    ...(monitor ? { readText: () => monitorConfigText(monitor) } : {}),
  });
  const reloader = reload;
  onReload = () => runInBackground("config.reload", () => reloader.reload(), {}, log);

  const stopped = Promise.withResolvers<string>();
  process.once("SIGTERM", () => stopped.resolve("SIGTERM"));
  process.once("SIGINT", () => stopped.resolve("SIGINT"));
  // An orphaned worker (its supervisor was killed with SIGKILL) stops instead of holding the port: the
  // supervisor's end of the IPC channel closes with it, without a timer waking an idle worker.
  const orphaned = () => stopped.resolve("orphaned");
  if (supervisorPid) {
    process.once("disconnect", orphaned);
    if (!process.connected || process.ppid !== supervisorPid) orphaned();
  }
  const reason = await stopped.promise;
  process.off("disconnect", orphaned);
  process.off("SIGHUP", reloadRequested);
  log.info("worker.stopping", { reason, drain_timeout_ms: config.server.drain_timeout_ms });
  // Terminals close while requests drain: a PTY call waiting on its yield ends at once instead of
  // holding the drain, and no terminal outlives the worker if the supervisor's grace runs out.
  try {
    await Promise.all([drain(server, config.server.drain_timeout_ms), services.pty.close()]);
    await services.close();
    // Whatever a command left running ends with agentd, as a unit's leftovers do under systemd.
    await cgroups?.closeAll();
  } finally {
    // A step that failed is the CLI's to report; the ready file and the store are let go regardless.
    removeReadyFile(dataDir, process.pid);
    db.close();
  }
  log.info("worker.stopped", { reason });
  return 0;
}

/** Stops accepting, lets in-flight requests finish up to the deadline, then closes what is left. */
async function drain(server: Server<SocketSession>, deadlineMs: number): Promise<void> {
  if ((await raceTimeout(server.stop(false), deadlineMs)) === "timeout") {
    log.warn("worker.drain_timeout", { pending_requests: server.pendingRequests });
    await server.stop(true);
  }
}
