import type { Database } from "bun:sqlite";
import { join } from "node:path";
import type { Hono } from "hono";
import { AgentdError } from "../core/errors/index.ts";
import { createLogger, type Logger } from "../core/log/index.ts";
import type { MetricFamily } from "../core/metrics/index.ts";
import type { AgentConfig } from "../core/config/sections/agentConfig.ts";
import { agentRoutes } from "./agentRoutes.ts";
import type { ApprovalsConfig } from "../core/config/sections/approvalsConfig.ts";
import { ApprovalService, type DecisionResult } from "./approvalService.ts";
import { WrittenFileStore } from "./writtenFileStore.ts";
import { ApprovalStore, type ApprovalDecision, type DecidedBy } from "./approvalStore.ts";
import { approvalView, type ApprovalView } from "./approvalView.ts";
import { DebugSidecar } from "./debugSidecar.ts";
import type { ServiceConfig } from "../core/config/sections/servicesConfig.ts";
import { SessionEvents } from "./sessionEvents.ts";
import { SessionStore, type SessionRecord } from "./sessionStore.ts";
import { sidecarFetch } from "./sidecarFetch.ts";
import { ToolCatalog } from "./toolCatalog.ts";
import { ToolCallStore } from "./toolCallStore.ts";
import { LOCAL_TARGET, type ToolDefinition, type ToolTarget } from "../core/tools/toolDefinition.ts";
import { LocalToolTarget } from "./toolTarget.ts";
import { createServiceTools } from "./serviceTools.ts";
import { TurnEngine } from "./turnEngine.ts";
import { lazyModelClient } from "./modelClient.ts";
import { CallRecorder } from "./callRecorder.ts";
import { ToolCallPipeline } from "./toolCallPipeline.ts";
import { DirectCalls } from "./directCalls.ts";
import { SessionChannels } from "./sessionChannels.ts";
import { AgentTelemetry } from "./agentTelemetry.ts";
import type { Tracer } from "../telemetry/index.ts";
import type { WatchdogApprovals } from "../watchdog/index.ts";
import { agentQueued, watchdogQueued, type QueuedApproval } from "./approvalQueue.ts";
import type { ToolCallRecord } from "./toolCallStore.ts";
import type { StoredMessage } from "./sessionStore.ts";

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface CreateAgentOptions {
  db: Database;
  dataDir: string;
  config: { agent: AgentConfig; approvals: ApprovalsConfig; services: readonly ServiceConfig[] };
  /** The local proxy in production (`http://127.0.0.1/v1`, reached through `fetch` without a socket). */
  modelBaseUrl: string;
  modelApiKey?: string;
  /** The other capabilities' tools (PTY, files, hop, incidents); the service tools are the agent's own. */
  tools: ToolDefinition[];
  logger?: Logger;
  /** The fetch under the model client: the worker's own app in production; tests and the benchmark observe requests with it. */
  fetch?: Fetch;
  /** Interval of the SSE heartbeat comment; 15 s unless a test needs it sooner. */
  heartbeatMs?: number;
  /** Turns, tool calls and approval waits become spans; off unless telemetry is configured. */
  tracer?: Tracer;
  /** A connected hop by name, as a session target (`POST /api/sessions {"target":"<hop>"}`). */
  hopTarget?: (name: string) => ToolTarget | undefined;
  /** The watchdog's command requests, listed and decided with the agent's approvals (one queue). */
  watchdogApprovals?: WatchdogApprovals;
}

export interface SessionSummary extends SessionRecord {
  pending_approvals: number;
}

/** A session as its transcript page shows it. */
export interface SessionTranscript {
  session: SessionRecord;
  messages: StoredMessage[];
  tool_calls: ToolCallRecord[];
  approvals: ApprovalView[];
}

export interface Agent {
  /** Mounted at `/api`: `/api/sessions…`, `/api/approvals…`. */
  routes: Hono;
  /** Most recent first; `total` counts every stored session (for paging). */
  sessions(page?: { limit: number; offset: number }): { total: number; rows: SessionSummary[] };
  /** With the raw command, for an authenticated approver (see approvalView). */
  pendingApprovals(): ApprovalView[];
  /** Everything waiting for a person, oldest first: the agent's and MCP clients' calls and the watchdog's commands. */
  approvalQueue(): QueuedApproval[];
  /** A session's record for its transcript page; throws 404 for an unknown id. */
  transcript(id: string): SessionTranscript;
  /** The decision the API and the status page's buttons take; throws 404, 409 (already decided, or `digest` is not the approval's). */
  decideApproval(id: string, decision: ApprovalDecision, decidedBy: DecidedBy, digest?: string): DecisionResult;
  /** Tool calls MCP clients make directly, under the same policy, approvals and records. */
  calls: DirectCalls;
  /** Turns, tool calls (the agent's and MCP clients') and approvals, from memory. */
  metricFamilies(): MetricFamily[];
  /** A config reload: the approval policy every call decided from now on follows. */
  setApprovals(approvals: ApprovalsConfig): void;
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
  const catalog = new ToolCatalog([...createServiceTools(services), ...options.tools]);
  // Targets other than local are the hops sessions switched to (the hop tool gives them).
  const targets = new Map<string, ToolTarget>();
  const switchTarget = (sessionId: string, target: ToolTarget | typeof LOCAL_TARGET) => {
    const name = target === LOCAL_TARGET ? LOCAL_TARGET : target.name;
    if (target !== LOCAL_TARGET) targets.set(name, target);
    sessions.setTarget(sessionId, name);
  };
  const local = new LocalToolTarget(catalog.byName, switchTarget);
  targets.set(LOCAL_TARGET, local);
  const debugDir = join(options.dataDir, "debug");
  const level = agentConfig.debug.level;
  const channels = new SessionChannels(
    (sessionId) =>
      level === "off"
        ? undefined
        : new DebugSidecar({
            dir: debugDir,
            sessionId,
            maxBytes: agentConfig.debug.max_bytes,
            keep: agentConfig.debug.keep,
            secrets: options.modelApiKey ? [options.modelApiKey] : [],
            logger,
          }),
    logger,
  );
  const base = options.fetch ?? globalThis.fetch;
  // One client for every session: the sidecar fetch finds each request's session by its header.
  // Retries and failover are the proxy's job; a retry here would repeat a half-streamed step.
  const client = lazyModelClient({
    apiKey: options.modelApiKey ?? "agentd-local",
    baseURL: options.modelBaseUrl,
    maxRetries: 0,
    timeout: 30 * 60_000,
    fetch: level === "off" ? base : sidecarFetch(base, level, (sessionId) => channels.peek(sessionId)),
  });
  // A hop opened by name (the API, `agentd run --on`) is a target too, not only one the hop tool gave.
  const known = (name: string): ToolTarget | undefined => targets.get(name) ?? options.hopTarget?.(name);
  const target = (name: string): ToolTarget => {
    const found = known(name);
    if (!found) throw new AgentdError("target_not_connected", `The session's target ${name} is not connected`);
    return found;
  };
  const telemetry = new AgentTelemetry(options.tracer, (name) => catalog.byName.has(name));
  // One pipeline and one recorder for the agent's calls and MCP clients' alike.
  const recorder = new CallRecorder({ sessions, events, toolCalls, channels, telemetry, agent: agentConfig, logger });
  const pipeline = new ToolCallPipeline({
    sessions,
    toolCalls,
    approvals,
    catalog,
    agent: agentConfig,
    approvalsConfig,
    logger,
    telemetry,
    recorder,
    writtenFiles: new WrittenFileStore(db),
  });
  const engine = new TurnEngine({
    sessions,
    events,
    toolCalls,
    approvals,
    catalog,
    target,
    client,
    channels,
    agent: agentConfig,
    logger,
    telemetry,
    pipeline,
  });
  engine.recoverInterrupted();
  const calls = new DirectCalls({
    sessions,
    events,
    toolCalls,
    approvals,
    catalog,
    local,
    channels,
    agent: agentConfig,
    logger,
    telemetry,
    pipeline,
  });
  // A decided approval continues what paused: the agent's turn, or a client's direct call.
  const resumer = {
    isRunning: (sessionId: string) => engine.isRunning(sessionId) || calls.isRunning(sessionId),
    resume: (sessionId: string, turnId: string) =>
      calls.isDirect(sessionId) ? calls.resume(sessionId, turnId) : engine.resume(sessionId, turnId),
  };
  const approvalService = new ApprovalService({ approvals, sessions, events, engine: resumer, channels, logger, telemetry });
  const routes = agentRoutes({
    sessions,
    events,
    toolCalls,
    approvals,
    engine,
    approvalService,
    defaultModel: agentConfig.model,
    hasTarget: (name) => known(name) !== undefined,
    debugDir,
    debugKeep: agentConfig.debug.keep,
    heartbeatMs: options.heartbeatMs ?? 15_000,
    watchdogApprovals: options.watchdogApprovals,
  });
  const approvalQueue = (): QueuedApproval[] =>
    [
      ...approvals.pending().map((record) => agentQueued(record, sessions.find(record.session_id))),
      ...(options.watchdogApprovals?.pending() ?? []).map((request) => watchdogQueued(request)),
    ].sort((a, b) => a.created_at - b.created_at);

  return {
    routes,
    sessions: (page = { limit: 100, offset: 0 }) => ({
      total: sessions.count(),
      rows: sessions.list(page.limit, page.offset).map((s) => ({ ...s, pending_approvals: approvals.pending(s.id).length })),
    }),
    pendingApprovals: () => approvals.pending().map(approvalView),
    approvalQueue,
    transcript: (id) => ({
      session: sessions.get(id),
      messages: sessions.messages(id),
      tool_calls: toolCalls.forSession(id),
      approvals: approvals.forSession(id).map(approvalView),
    }),
    decideApproval: (id, decision, decidedBy, digest) => approvalService.decide(id, decision, decidedBy, digest),
    calls,
    metricFamilies: () => telemetry.metricFamilies(approvals.pendingSince(), engine.runningCount, pipeline.judgedSessions),
    // The pipeline reads this object at each call: replaced in place, it is the new policy.
    setApprovals: (next) => {
      Object.assign(approvalsConfig, next);
    },
    close: async () => {
      await Promise.all([calls.close(), engine.cancelAll("agentd is stopping")]);
      await channels.closeAll();
    },
  };
}
