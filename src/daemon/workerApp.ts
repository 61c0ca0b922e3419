import type { Database } from "bun:sqlite";
import type { Hono } from "hono";
import { readFileSync } from "node:fs";
import type { Mount } from "../core/capability.ts";
import type { AgentdConfig } from "../core/config/index.ts";
import { cachedFor, type HealthCheck } from "../core/health/index.ts";
import type { Logger } from "../core/log/index.ts";
import { probeStoreWritable } from "../core/store/index.ts";
import { onDiskFull } from "../core/errors/index.ts";
import { failureCount, parsePasswd } from "../core/process/index.ts";
import { faultMounts } from "./faultInjection.ts";
import { VERSION } from "../core/version.ts";
import { createApp } from "../http/app.ts";
import type { AppFetch } from "../http/hotRoutes.ts";
import { AGENT_DIRECT_CALL_PATHS, DECISION_PATHS } from "../http/agentPeerGuard.ts";
import type { CommandIdentity } from "../core/process/index.ts";
import type { CommandCgroups } from "../core/process/cgroups/index.ts";
import { healthDocument, type ProbeDeps } from "../http/probeRoutes.ts";
import { statusPageMounts } from "../status/statusMounts.ts";
import { createStatusSource } from "../status/statusSource.ts";
import { createWorkerServices, type MonitoredWork, type WorkerServices } from "./workerServices.ts";
import type { WatchdogCounters } from "../watchdog/index.ts";
import { storeFileSizes } from "./storeFileSizes.ts";
import { LatestVerdict } from "./latestVerdict.ts";

export interface WorkerAppOptions {
  config: AgentdConfig;
  /** What the config loader wants the operator to know (shown by /health and the page). */
  notes: string[];
  /** Variables the config read secrets from: kept from the commands the agent runs. */
  envReferences?: readonly string[];
  /** The operator's umask, for the commands the agent runs. */
  childUmask?: number;
  /** agentd's own files (data dir, config file): no file tool or route opens them. */
  ownPaths?: readonly string[];
  /** Who commands run as; absent (tests): agentd's own user, reported as unguarded. */
  identity?: CommandIdentity;
  cgroups?: CommandCgroups;
  /** Started as root with the worker a service user: what only the privileged monitor may do. */
  monitored?: MonitoredWork;
  db: Database;
  dataDir: string;
  logger: Logger;
  /** Set on a non-loopback bind: the API and the page then need it. */
  requiredToken?: string;
  startedAt: number;
  supervisorPid: number | null;
  restarts: number;
  /** The uid commands run as for the model: its connections may not decide or call the direct routes. */
  commandUid?: number;
  /** Decisions need it even on loopback (<data_dir>/token, which the command user cannot read). */
  decisionToken?: string;
  /** Direct calls need it too (commands in namespaces run as agentd's own uid). */
  directCallToken?: string;
  /** Routes of the worker itself (the config reload) mounted beside the capabilities'. */
  extraMounts?: Mount[];
  /** The supervisor's watchdog counters as it last pushed them (none when no supervisor started this worker). */
  watchdogCounters?: () => WatchdogCounters | undefined;
}

export interface WorkerApp {
  app: Hono;
  /** The app's fetch with the proxy's hot routes beside it: what the server and in-process calls use. */
  fetch: AppFetch;
  services: WorkerServices;
}

/** The worker's one Hono app: probes, metrics, the status page and every capability's routes. */
export async function createWorkerApp(options: WorkerAppOptions): Promise<WorkerApp> {
  const { config, db, requiredToken, startedAt, restarts } = options;
  let appFetch: WorkerApp["fetch"] | undefined;
  const services = await createWorkerServices({
    config,
    db,
    ...(options.watchdogCounters ? { watchdogCounters: options.watchdogCounters } : {}),
    dataDir: options.dataDir,
    logger: options.logger,
    envReferences: options.envReferences,
    childUmask: options.childUmask,
    ...(options.ownPaths ? { ownPaths: options.ownPaths } : {}),
    ...(options.identity ? { identity: options.identity } : {}),
    ...(options.cgroups ? { cgroups: options.cgroups } : {}),
    ...(options.monitored ? { monitored: options.monitored } : {}),
    localApiKey: requiredToken,
    localFetch: (request) => appFetch!(request),
  });

  const storeProblem = cachedFor(1000, () => {
    try {
      probeStoreWritable(db);
      return undefined;
    } catch (error) {
      return `store not writable: ${(error as Error).message}`;
    }
  });
  // A write refused for lack of space shows on the very next probe, not a cache period later.
  const stopDiskFullWatch = onDiskFull(() => storeProblem.invalidate());
  let requestsTotal = () => 0;
  const probes: ProbeDeps = {
    version: VERSION,
    startedAt,
    notes: () => options.notes,
    readiness: () => [storeProblem()].filter((reason): reason is string => reason !== undefined),
    requestsTotal: () => requestsTotal(),
    healthSources: {
      store: () => {
        const problem = storeProblem();
        return [{ key: "store:writable", status: problem ? "fail" : "pass", observedValue: !problem, output: problem }];
      },
      process: () => [
        { key: "worker:memory", status: "pass", observedValue: Math.round(process.memoryUsage.rss() / 1048576), observedUnit: "MiB" },
      ],
      ...services.healthSources,
      ...(options.identity ? { security: () => [gateCheck(options.identity!)] } : {}),
    },
  };
  const gate = options.identity ?? { mode: "unguarded", problems: ["commands run as agentd's own user"] };
  const gateProblem = gate.problems.length > 0 ? gate.problems.join("; ") : undefined;
  const status = createStatusSource({
    ...services.statusSources,
    health: () => healthDocument(probes),
    worker: () => ({
      pid: process.pid,
      supervisor_pid: options.supervisorPid,
      version: VERSION,
      uptime_s: Math.round((Date.now() - startedAt) / 1000),
      restarts,
      memory_mb: Math.round((process.memoryUsage.rss() / 1048576) * 10) / 10,
      privilege_gate: {
        mode: gate.mode,
        user: gate.user ?? null,
        // Who the worker itself runs as: a service user when agentd started as root split itself.
        worker_user: ownUserName(),
        ...(gate.limits ? { limits: gate.limits } : {}),
      },
      ...(gateProblem ? { privilege_gate_problem: gateProblem } : {}),
    }),
  });
  const verdict = new LatestVerdict(() => status.section("verdict"), options.logger);
  // With a decision token, a person on loopback signs in once (the cookie) to decide from the page.
  const page = statusPageMounts(status, { requiredToken: requiredToken ?? options.decisionToken });
  const created = createApp({
    ...probes,
    logger: options.logger,
    requiredToken,
    publicPaths: page.publicPaths,
    bodyLimitBytes: config.server.body_limit_bytes,
    metricFamilies: () => [
      {
        name: "agentd_worker_restarts_total",
        help: "Times the supervisor restarted the worker.",
        type: "counter",
        samples: [{ value: restarts }],
      },
      {
        name: "agentd_unhandled_errors_total",
        help: "Unhandled rejections and uncaught exceptions the worker logged and survived.",
        type: "counter",
        samples: [{ value: failureCount("unhandled") }],
      },
      {
        name: "agentd_store_size_bytes",
        help: "Size of the SQLite store on disk, by file (the database and its write-ahead log).",
        type: "gauge",
        samples: storeFileSizes(db.filename),
      },
      {
        name: "agentd_store_writable",
        help: "1 while the store takes writes, 0 when it refuses them (disk full, read-only, damaged).",
        type: "gauge",
        samples: [{ value: storeProblem() ? 0 : 1 }],
      },
      {
        name: "agentd_background_failures_total",
        help: "Background tasks (turns, sweeps, prunes) that failed and were logged.",
        type: "counter",
        samples: [{ value: failureCount("background") }],
      },
      ...services.metricFamilies(),
      ...verdict.families(),
    ],
    beforeScrape: () => verdict.refresh(),
    verdict: () => status.section("verdict"),
    mounts: [...page.mounts, ...services.mounts, ...(options.extraMounts ?? []), ...faultMounts(process.env, options.logger)],
    // The model must never decide its own approvals: not from a command it runs, not through the worker.
    agentPeers: {
      paths: DECISION_PATHS,
      directCallPaths: AGENT_DIRECT_CALL_PATHS,
      commandUid: options.commandUid,
      decisionToken: options.decisionToken,
      directCallToken: options.directCallToken,
    },
  });
  appFetch = created.fetch;
  requestsTotal = () => created.requests.total;
  const close = services.close;
  return {
    app: created.app,
    fetch: created.fetch,
    services: {
      ...services,
      close: async () => {
        stopDiskFullWatch();
        await close();
      },
    },
  };
}

/** The privilege gate as a health check: warn while commands can reach agentd (unguarded). */
function gateCheck(identity: CommandIdentity): HealthCheck {
  const problem = identity.problems.join("; ");
  return {
    key: "security:privilege_gate",
    status: problem ? "warn" : "pass",
    observedValue: identity.mode,
    ...(problem ? { output: `unguarded: ${problem}` } : {}),
  };
}

/** This process's user name from /etc/passwd (a service user has no USER in its environment); its uid when not there. */
function ownUserName(): string {
  const uid = process.getuid?.() ?? 0;
  try {
    return parsePasswd(readFileSync("/etc/passwd", "utf8")).find((account) => account.uid === uid)?.name ?? String(uid);
  } catch {
    return String(uid);
  }
}
