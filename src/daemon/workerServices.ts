import type { Database } from "bun:sqlite";
import { createAgent, type Agent } from "../agent/index.ts";
import type { AgentdConfig } from "../core/config/index.ts";
import type { HealthSource } from "../core/health/index.ts";
import type { Logger } from "../core/log/index.ts";
import { createFileRoutes } from "../files/index.ts";
import { createHopManager, createHopToolTarget, runningBinaryPath, type HopManager } from "../hop/index.ts";
import { createProxy, type Proxy as ProxyService } from "../proxy/index.ts";
import { createPtyRoutes, createPtyTools, PtyManager } from "../pty/index.ts";
import { ActionRequestStore, IncidentStore, incidentRoutes, readCheckRows } from "../watchdog/index.ts";
import type { Mount } from "../http/app.ts";
import type { StatusSources } from "../status/statusSource.ts";
import { approvalRow, hopRow, providerRow, ptySessionRow, sessionRow } from "../status/statusRows.ts";

export interface WorkerServicesOptions {
  config: AgentdConfig;
  db: Database;
  dataDir: string;
  logger: Logger;
  /** Sent by the agent's model client to the local proxy (the bearer token on a non-loopback bind). */
  localApiKey?: string;
  /** Serves a request with the worker's own app, so the agent reaches the proxy without a socket. */
  localFetch: (request: Request) => Response | Promise<Response>;
}

/** Every capability the worker runs, composed: what to mount, what to report, how to stop. */
export interface WorkerServices {
  proxy: ProxyService;
  pty: PtyManager;
  hops: HopManager;
  agent: Agent;
  incidents: IncidentStore;
  mounts: Mount[];
  healthSources: Record<string, HealthSource>;
  metricsText: Array<() => string>;
  statusSources: Omit<StatusSources, "health" | "worker">;
  close(): Promise<void>;
}

/** The agent's requests never touch a socket (localFetch), but they pass the loopback Host check. */
export const LOCAL_MODEL_BASE_URL = "http://127.0.0.1/v1";

export function createWorkerServices(options: WorkerServicesOptions): WorkerServices {
  const { config, db, dataDir, logger } = options;
  const proxy = createProxy({ providers: config.providers, config: config.proxy, db, logger: logger.child("proxy") });
  const pty = new PtyManager({ dataDir, config: config.pty, logger: logger.child("pty") });
  const hops = createHopManager({ db, dataDir, config: config.hops, logger: logger.child("hop"), selfBinaryPath: runningBinaryPath() });
  const agent = createAgent({
    db,
    dataDir,
    config: { agent: config.agent, approvals: config.approvals, services: config.services },
    modelBaseUrl: LOCAL_MODEL_BASE_URL,
    modelApiKey: options.localApiKey,
    tools: createPtyTools(pty),
    hops: {
      target: (name) => createHopToolTarget(hops, name, { readFileMaxBytes: config.agent.read_file_max_bytes }),
      describe: (name) => ({ ...hops.get(name) }),
      names: () =>
        hops
          .list()
          .filter((hop) => hop.state !== "closed")
          .map((hop) => hop.name),
    },
    logger: logger.child("agent"),
    fetch: async (input, init) =>
      options.localFetch(typeof input === "string" || input instanceof URL ? new Request(String(input), init) : new Request(input, init)),
  });
  const incidents = new IncidentStore(db);
  const actionRequests = new ActionRequestStore(db, incidents);
  return {
    proxy,
    pty,
    hops,
    agent,
    incidents,
    mounts: [
      { path: "/v1", app: proxy.routes, bodyLimitBytes: config.proxy.max_body_bytes },
      { path: "/api/admin/proxy", app: proxy.adminRoutes, loopbackOnly: true },
      { path: "/api/pty", app: createPtyRoutes(pty) },
      { path: "/api/incidents", app: incidentRoutes(incidents) },
      { path: "/api/files", app: createFileRoutes() },
      { path: "/api/hops", app: hops.routes },
      { path: "/api", app: agent.routes },
    ],
    healthSources: {
      proxy: () => proxy.healthChecks(),
      pty: () => pty.healthChecks(),
    },
    metricsText: [() => proxy.metricsText()],
    statusSources: {
      incidents,
      providers: config.providers.length ? () => proxy.status().map(providerRow) : undefined,
      watchdogChecks: () => readCheckRows(db).map((row) => ({ ...row, state: row.state })),
      sessions: (page) => {
        const { total, rows } = agent.sessions(page);
        return { total, rows: rows.map(sessionRow) };
      },
      approvals: () => agent.pendingApprovals().map(approvalRow),
      ptySessions: () => pty.list().map((session) => ptySessionRow(session)),
      hops: () => hops.list().map(hopRow),
      decisions: {
        approval: (id, decision, decidedBy) => agent.decideApproval(id, decision, decidedBy),
        incidentAction: (id, decision, decidedBy) => actionRequests.decide(id, decision, decidedBy, Date.now()),
      },
    },
    async close() {
      // The agent first: it cancels turns whose tools still use PTYs and the proxy.
      await agent.close();
      // Closes the tunnels only: the remote agentds keep running for the next hop.
      await hops.close();
      await pty.close();
      await proxy.close();
    },
  };
}
