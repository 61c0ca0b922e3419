import type { Database } from "bun:sqlite";
import { join } from "node:path";
import type { Hono } from "hono";
import OpenAI from "openai";
import { AgentdError } from "../core/errors/index.ts";
import { createLogger, type Logger } from "../core/log/index.ts";
import { IncidentStore } from "../watchdog/index.ts";
import type { AgentConfig } from "../core/config/sections/agentConfig.ts";
import { agentRoutes } from "./agentRoutes.ts";
import type { ApprovalsConfig } from "../core/config/sections/approvalsConfig.ts";
import { ApprovalService, type DecisionResult } from "./approvalService.ts";
import { ApprovalStore, type ApprovalDecision, type ApprovalRecord, type DecidedBy } from "./approvalStore.ts";
import { DebugSidecar } from "./debugSidecar.ts";
import type { ServiceConfig } from "../core/config/sections/servicesConfig.ts";
import { SessionEvents } from "./sessionEvents.ts";
import { SessionStore, type SessionRecord } from "./sessionStore.ts";
import { sidecarFetch } from "./sidecarFetch.ts";
import { ToolCatalog } from "./toolCatalog.ts";
import { ToolCallStore } from "./toolCallStore.ts";
import type { ToolDefinition } from "../core/tools/toolDefinition.ts";
import { LOCAL_TARGET, LocalToolTarget, type ToolTarget } from "./toolTarget.ts";
import { createReadFileTool, createWriteFileTool } from "./tools/fileTools.ts";
import { createHopTool, type HopTargets } from "./tools/hopTool.ts";
import { createIncidentTools } from "./tools/incidentTools.ts";
import { createServiceTools } from "./tools/serviceTools.ts";
import { TurnEngine, type ModelChannel } from "./turnEngine.ts";

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface CreateAgentOptions {
  db: Database;
  dataDir: string;
  config: { agent: AgentConfig; approvals: ApprovalsConfig; services: readonly ServiceConfig[] };
  /** The local proxy in production (`http://127.0.0.1:<port>/v1`). */
  modelBaseUrl: string;
  modelApiKey?: string;
  /** Tools besides the built-in ones (read_file, write_file, incidents, services): the PTY tools, hop. */
  tools: ToolDefinition[];
  /** Remote executors (hops); "local" always exists. */
  targets?: ToolTarget[];
  /** Hops the `hop` tool may switch a session to; without it the agent has no hop tool. */
  hops?: HopTargets;
  logger?: Logger;
  /** The fetch under the model client (tests and the benchmark observe requests with it). */
  fetch?: Fetch;
  /** Interval of the SSE heartbeat comment; 15 s unless a test needs it sooner. */
  heartbeatMs?: number;
}

export interface SessionSummary extends SessionRecord {
  pending_approvals: number;
}

export interface Agent {
  /** Mounted at `/api`: `/api/sessions…`, `/api/approvals…`. */
  routes: Hono;
  /** Most recent first; `total` counts every stored session (for paging). */
  sessions(page?: { limit: number; offset: number }): { total: number; rows: SessionSummary[] };
  pendingApprovals(): ApprovalRecord[];
  /** The decision the API and the status page's buttons take; throws 404, 409 (already decided). */
  decideApproval(id: string, decision: ApprovalDecision, decidedBy: DecidedBy): DecisionResult;
  /** Adds a remote executor (a hop) that sessions may target. */
  addTarget(target: ToolTarget): void;
  /** Points a session's tool calls at another target (the hop tool switches hosts with it). */
  setSessionTarget(sessionId: string, target: string): void;
  /** Cancels running turns cleanly and writes every sidecar record out; pending approvals stay. */
  close(): Promise<void>;
}

export function createAgent(options: CreateAgentOptions): Agent {
  const logger = options.logger ?? createLogger("agent");
  const { agent: agentConfig, approvals: approvalsConfig, services } = options.config;
  const db = options.db;
  const sessions = new SessionStore(db);
  const events = new SessionEvents(db, (sessionId, error) => logger.warn("session.listener_failed", { session: sessionId, error }));
  const toolCalls = new ToolCallStore(db);
  const approvals = new ApprovalStore(db);
  const builtins: ToolDefinition[] = [
    createReadFileTool({ maxBytes: agentConfig.read_file_max_bytes }) as ToolDefinition,
    createWriteFileTool() as ToolDefinition,
    ...createIncidentTools(new IncidentStore(db)),
    ...createServiceTools(services),
  ];
  const targets = new Map<string, ToolTarget>();
  if (options.hops) {
    builtins.push(
      createHopTool(options.hops, {
        switchTo: (sessionId, target) => {
          const name = target === LOCAL_TARGET ? LOCAL_TARGET : target.name;
          if (target !== LOCAL_TARGET) targets.set(name, target);
          sessions.setTarget(sessionId, name);
        },
      }) as ToolDefinition,
    );
  }
  const catalog = new ToolCatalog([...builtins, ...options.tools]);
  targets.set(LOCAL_TARGET, new LocalToolTarget(catalog.byName));
  for (const target of options.targets ?? []) targets.set(target.name, target);
  const debugDir = join(options.dataDir, "debug");
  const apiKey = options.modelApiKey ?? "agentd-local";
  const channels = new Map<string, ModelChannel>();
  const channel = (sessionId: string): ModelChannel => {
    const found = channels.get(sessionId);
    if (found) return found;
    const base = options.fetch ?? globalThis.fetch;
    const level = agentConfig.debug.level;
    const sidecar =
      level === "off"
        ? undefined
        : new DebugSidecar({
            dir: debugDir,
            sessionId,
            maxBytes: agentConfig.debug.max_bytes,
            keep: agentConfig.debug.keep,
            secrets: options.modelApiKey ? [options.modelApiKey] : [],
            logger,
          });
    // Retries and failover are the proxy's job; a retry here would repeat a half-streamed step.
    const created: ModelChannel = { client: undefined as never, sidecar };
    const takeNote = () => {
      const note = created.note;
      created.note = undefined;
      return note;
    };
    created.client = new OpenAI({
      apiKey,
      baseURL: options.modelBaseUrl,
      maxRetries: 0,
      timeout: 30 * 60_000,
      fetch: sidecar ? sidecarFetch(base, sidecar, level, takeNote) : base,
    });
    channels.set(sessionId, created);
    return created;
  };
  const target = (name: string): ToolTarget => {
    const found = targets.get(name);
    if (!found) throw new AgentdError("unknown_target", `The session's target ${name} is not connected`, { status: 409 });
    return found;
  };
  const engine = new TurnEngine({
    sessions,
    events,
    toolCalls,
    approvals,
    catalog,
    target,
    channel,
    agent: agentConfig,
    approvalsConfig,
    logger,
  });
  engine.recoverInterrupted();
  const approvalService = new ApprovalService({ approvals, sessions, events, engine, channel, logger });
  const routes = agentRoutes({
    sessions,
    events,
    toolCalls,
    approvals,
    engine,
    approvalService,
    defaultModel: agentConfig.model,
    hasTarget: (name) => targets.has(name),
    debugDir,
    debugKeep: agentConfig.debug.keep,
    heartbeatMs: options.heartbeatMs ?? 15_000,
  });

  return {
    routes,
    sessions: (page = { limit: 100, offset: 0 }) => ({
      total: sessions.count(),
      rows: sessions.list(page.limit, page.offset).map((s) => ({ ...s, pending_approvals: approvals.pending(s.id).length })),
    }),
    pendingApprovals: () => approvals.pending(),
    decideApproval: (id, decision, decidedBy) => approvalService.decide(id, decision, decidedBy),
    addTarget: (t) => void targets.set(t.name, t),
    setSessionTarget: (sessionId, name) => {
      sessions.get(sessionId);
      if (!targets.has(name)) throw new AgentdError("unknown_target", `No target named ${name}`, { status: 400 });
      sessions.setTarget(sessionId, name);
    },
    close: async () => {
      await engine.cancelAll("agentd is stopping");
      await Promise.all([...channels.values()].map((c) => c.sidecar?.close()));
    },
  };
}
