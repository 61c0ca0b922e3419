import type { Database } from "bun:sqlite";
import { createAgentCapability } from "../agent/index.ts";
import type { Mount } from "../core/capability.ts";
import { combineReports, ConfigChange, type ReloadReport } from "../core/configChange.ts";
import { configSecretValues, type AgentdConfig } from "../core/config/index.ts";
import type { HealthSource } from "../core/health/index.ts";
import type { Logger } from "../core/log/index.ts";
import type { MetricFamily } from "../core/metrics/index.ts";
import { createFilesCapability, type FileAccess } from "../files/index.ts";
import { createHopCapability, runningBinaryPath, type HopCapability } from "../hop/index.ts";
import { AgentdError } from "../core/errors/index.ts";
import { createMcpCapability } from "../mcp/index.ts";
import { createProxyCapability } from "../proxy/index.ts";
import { type CommandLauncher, createPtyCapability, type PtyCapability } from "../pty/index.ts";
import type { StatusSources } from "../status/statusSource.ts";
import { approvalRow, hopRow, providerRow, ptySessionRow, sessionRow } from "../status/statusRows.ts";
import { createWatchdogCapability, SilenceStore, type WatchdogCounters } from "../watchdog/index.ts";
import { createTelemetryCapability, startTracing } from "../telemetry/index.ts";
import { CapabilityStack } from "./capabilityStack.ts";
import { withholdSecretValues } from "../core/process/index.ts";
import type { CommandIdentity } from "../core/process/index.ts";
import type { CommandCgroups } from "../core/process/cgroups/index.ts";

/** The work a worker running as a service user asks agentd's privileged monitor to do. */
export interface MonitoredWork {
  launcher: CommandLauncher;
  files: FileAccess;
}

export interface WorkerServicesOptions {
  config: AgentdConfig;
  db: Database;
  dataDir: string;
  logger: Logger;
  /** Variables the config read secrets from: kept from the commands the agent runs. */
  envReferences?: readonly string[];
  /** The operator's umask, for the commands the agent runs. */
  childUmask?: number;
  /** agentd's own files (data dir, config file): no file tool or route opens them. */
  ownPaths?: readonly string[];
  /** Who commands run as (absent: agentd's own user, as in tests). */
  identity?: CommandIdentity;
  /** Each command session's cgroup, where agentd could set them up. */
  cgroups?: CommandCgroups;
  /** Started as root with the worker a service user: what only the privileged monitor may do. */
  monitored?: MonitoredWork;
  /** Sent by the agent's model client to the local proxy (the bearer token on a non-loopback bind). */
  localApiKey?: string;
  /** Serves a request with the worker's own app, so the agent reaches the proxy without a socket. */
  localFetch: (request: Request) => Response | Promise<Response>;
  /** The supervisor's watchdog counters as it last pushed them. */
  watchdogCounters?: () => WatchdogCounters | undefined;
}

/** Every capability the worker runs, composed: what to mount, what to report, how to stop. */
export interface WorkerServices {
  /** Closed on its own while requests drain, so a PTY call waiting on its yield ends at once. */
  pty: PtyCapability;
  mounts: Mount[];
  healthSources: Record<string, HealthSource>;
  /** Every capability's /metrics families, in start order. */
  metricFamilies(): MetricFamily[];
  statusSources: Omit<StatusSources, "health" | "worker">;
  /**
   * A config reload (SIGHUP): each capability applies what it can in place (nothing is dropped);
   * the answer names the changed keys applied and those that need a restart.
   */
  reloadConfig(config: AgentdConfig): ReloadReport;
  /** Closes the capabilities in reverse start order: the agent first (it cancels turns that use PTYs and the proxy). */
  close(): Promise<void>;
}

/** What the worker itself took at start: the listener, the log, the supervisor's policy, the data dir. */
const WORKER_RESTART_ONLY = ["data_dir", "server", "log", "supervisor"];

/** The agent's requests never touch a socket (localFetch), but they pass the loopback Host check. */
const LOCAL_MODEL_BASE_URL = "http://127.0.0.1/v1";

export async function createWorkerServices(options: WorkerServicesOptions): Promise<WorkerServices> {
  const { config, db, dataDir, logger } = options;
  // Before any command starts: a variable holding a configured secret is withheld whatever its
  // name (SUDO_COMMAND of `sudo -u agentd env KEY=sk-… agentd serve`).
  const secretValues = (next: AgentdConfig) => configSecretValues(next, options.envReferences ?? [], process.env);
  withholdSecretValues([...secretValues(config), ...(options.localApiKey ? [options.localApiKey] : [])]);
  const readFileMaxBytes = config.agent.read_file_max_bytes;
  // The config in force: replaced by each reload, and what the next one is compared with.
  let current = config;
  const { stack, value: services } = await CapabilityStack.compose(async (stack) => {
    // First in, last out: spans the other capabilities end while closing are still exported.
    const tracing = await startTracing(config.telemetry, "worker", logger.child("telemetry"));
    stack.start(() => createTelemetryCapability(tracing));
    const { tracer } = tracing;
    const proxy = stack.start(() =>
      createProxyCapability({ providers: config.providers, config: config.proxy, db, logger: logger.child("proxy"), tracer }),
    );
    // Hops start after the terminals; a request naming one finds it once it exists.
    let hops: HopCapability | undefined;
    const pty = stack.start(() =>
      createPtyCapability({
        targets: (name) => {
          if (!hops) throw new AgentdError("unknown_target", `No target named ${name}`, { param: "target" });
          return hops.terminals(name);
        },
        dataDir,
        config: config.pty,
        logger: logger.child("pty"),
        withheldEnv: options.envReferences,
        childUmask: options.childUmask,
        ...(options.identity ? { identity: options.identity } : {}),
        ...(options.cgroups ? { cgroups: options.cgroups } : {}),
        ...(options.monitored ? { launcher: options.monitored.launcher } : {}),
      }),
    );
    stack.start(() =>
      createFilesCapability({
        readFileMaxBytes,
        ownPaths: options.ownPaths ?? [dataDir],
        identity: options.identity,
        ...(options.monitored ? { files: options.monitored.files } : {}),
      }),
    );
    const hop = stack.start(() =>
      createHopCapability({
        db,
        dataDir,
        config: config.hops,
        logger: logger.child("hop"),
        selfBinaryPath: runningBinaryPath(),
        readFileMaxBytes,
      }),
    );
    hops = hop;
    const watchdog = stack.start(() =>
      createWatchdogCapability({
        db,
        counters: options.watchdogCounters ?? (() => undefined),
        // What a silence may name beyond the built-in catalog and the checks.
        configuredNames: () => [
          ...current.providers.map((p) => p.name),
          ...current.watchdog.checks.flatMap((c) => [c.name, `check:${c.name}`, `check.${c.type}`]),
          ...current.watchdog.signatures.flatMap((s) => [s.id, s.component]),
        ],
      }),
    );
    // The agent comes last: it runs the tools of every capability started before it.
    const tools = stack.started.flatMap((capability) => capability.tools ?? []);
    const agent = stack.start(() =>
      createAgentCapability({
        db,
        dataDir,
        config: { agent: config.agent, approvals: config.approvals, services: config.services },
        modelBaseUrl: LOCAL_MODEL_BASE_URL,
        modelApiKey: options.localApiKey,
        tools,
        tracer,
        hopTarget: (name) => hop.target(name),
        watchdogApprovals: watchdog.approvals,
        logger: logger.child("agent"),
        fetch: async (input, init) =>
          options.localFetch(
            typeof input === "string" || input instanceof URL ? new Request(String(input), init) : new Request(input, init),
          ),
      }),
    );
    // MCP serves the agent's tools through the agent's approvals and records, so it comes after it.
    stack.start(() =>
      createMcpCapability({
        calls: agent.agent.calls,
        status: () => localJson(options, "/status"),
        logger: logger.child("mcp"),
      }),
    );
    const statusSources: WorkerServices["statusSources"] = {
      incidents: watchdog.incidents,
      // Always read: a reload may add the first provider.
      providers: () => proxy.status().map(providerRow),
      watchdogChecks: () => watchdog.checkRows(),
      sessions: (page) => {
        const { total, rows } = agent.agent.sessions(page);
        return { total, rows: rows.map(sessionRow) };
      },
      approvals: () => agent.agent.approvalQueue().map(approvalRow),
      silences: () => new SilenceStore(db).active(),
      transcript: (id) => agent.agent.transcript(id),
      ptySessions: () => pty.sessions().map(ptySessionRow),
      hops: () => hop.list().map(hopRow),
      decisions: {
        approval: (id, decision, decidedBy, digest) => agent.agent.decideApproval(id, decision, decidedBy, digest),
        incidentAction: (id, decision, decidedBy) => watchdog.decideAction(id, decision, decidedBy),
      },
    };
    const reloadConfig = (next: AgentdConfig): ReloadReport => {
      withholdSecretValues(secretValues(next));
      const change = new ConfigChange(current, next);
      current = next;
      const reports = stack.started.map((capability) => capability.reload(change));
      return combineReports(change, [...reports, change.report(WORKER_RESTART_ONLY, WORKER_RESTART_ONLY)], config);
    };
    return { pty, statusSources, reloadConfig };
  });
  const capabilities = stack.started;
  const healthSources: Record<string, HealthSource> = {};
  for (const capability of capabilities) if (capability.healthChecks) healthSources[capability.name] = capability.healthChecks;
  return {
    ...services,
    mounts: capabilities.flatMap((capability) => capability.routes ?? []),
    healthSources,
    metricFamilies: () => capabilities.flatMap((capability) => capability.metricFamilies?.() ?? []),
    close: () => stack.close(),
  };
}

/** A JSON answer of the worker's own app (the status snapshot MCP serves), without a socket. */
async function localJson(options: WorkerServicesOptions, path: string): Promise<unknown> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.localApiKey) headers.authorization = `Bearer ${options.localApiKey}`;
  const response = await options.localFetch(new Request(`http://127.0.0.1${path}`, { headers }));
  return response.json();
}
