import { existsSync, readFileSync } from "node:fs";
import { Hono } from "hono";
import { z } from "zod";
import { AgentdError } from "../core/errors/index.ts";
import { queryInt } from "../http/queryNumber.ts";
import { policyValues } from "../core/config/sections/approvalsConfig.ts";
import { digestField } from "./approvalDigest.ts";
import type { ApprovalService } from "./approvalService.ts";
import { approvalDecisions, decidedByValues, type ApprovalRecord, type ApprovalStore } from "./approvalStore.ts";
import { approvalView } from "./approvalView.ts";
import type { WatchdogApprovals } from "../watchdog/index.ts";
import { agentQueued, decideWatchdog, watchdogQueued, watchdogRequestId, type QueuedApproval } from "./approvalQueue.ts";
import { sidecarPath } from "./debugSidecar.ts";
import { sessionEventStream } from "./eventStream.ts";
import { readRequestBody } from "./requestBody.ts";
import type { SessionEvents } from "./sessionEvents.ts";
import type { SessionStore } from "./sessionStore.ts";
import type { ToolCallStore } from "./toolCallStore.ts";
import type { TurnEngine } from "./turnEngine.ts";

export interface AgentRouteDeps {
  sessions: SessionStore;
  events: SessionEvents;
  toolCalls: ToolCallStore;
  approvals: ApprovalStore;
  engine: TurnEngine;
  approvalService: ApprovalService;
  defaultModel: string;
  hasTarget(name: string): boolean;
  debugDir: string;
  debugKeep: number;
  heartbeatMs: number;
  watchdogApprovals?: WatchdogApprovals;
}

const scopePolicyOverride = z.strictObject({
  read: z.enum(policyValues).optional(),
  exec: z.enum(policyValues).optional(),
  fs_write: z.enum(policyValues).optional(),
  hop: z.enum(policyValues).optional(),
  sudo: z.enum(policyValues).optional(),
  service_control: z.enum(policyValues).optional(),
});

const createSessionBody = z.strictObject({
  model: z.string().min(1).optional(),
  target: z.string().min(1).optional(),
  policy: scopePolicyOverride.optional(),
});

const messageBody = z.strictObject({ content: z.string().min(1, "content must not be empty") });

const decisionBody = z.object({
  decision: z.enum(approvalDecisions),
  decided_by: z.enum(decidedByValues).optional(),
  /** The approval's digest as the approver saw it; optional only for API clients older than digests. */
  digest: digestField.optional(),
});

class SessionBusyError extends AgentdError {
  constructor(id: string, state: string, pending: string[]) {
    const why =
      state === "awaiting_approval"
        ? `it waits for a decision on ${pending.join(", ")} (agentd approve <id> once|session|deny)`
        : "a turn is running";
    super("session_busy", `Session ${id} cannot take a message now: ${why}`, {
      details: { state, pending_approvals: pending },
    });
  }
}

function parseAfter(value: string | undefined, name: string): number {
  return queryInt(value, { name, fallback: 0 });
}

/** `/sessions…` and `/approvals…`; the worker mounts this app at `/api`. */
export function agentRoutes(deps: AgentRouteDeps): Hono {
  const app = new Hono();
  const { sessions, events, engine } = deps;

  app.post("/sessions", async (c) => {
    const body = await readRequestBody(c, createSessionBody);
    const target = body.target ?? "local";
    if (!deps.hasTarget(target))
      throw new AgentdError("unknown_target", `No target named ${target}; sessions run on "local" or on a connected hop`, {
        param: "target",
      });
    const session = sessions.create({ model: body.model ?? deps.defaultModel, target, policy: body.policy ?? {} });
    return c.json(session, 201);
  });

  app.get("/sessions", (c) =>
    c.json({ sessions: sessions.list(queryInt(c.req.query("limit"), { name: "limit", min: 1, max: 1000, fallback: 100 })) }),
  );

  app.get("/sessions/:id", (c) => {
    const id = c.req.param("id");
    const session = sessions.get(id);
    return c.json({
      session,
      turns: sessions.turns(id),
      messages: sessions.messages(id),
      tool_calls: deps.toolCalls.forSession(id),
      approvals: deps.approvals.forSession(id).map(approvalView),
      last_event: events.lastSeq(id),
    });
  });

  app.post("/sessions/:id/messages", async (c) => {
    const id = c.req.param("id");
    const session = sessions.get(id);
    const { content } = await readRequestBody(c, messageBody);
    // A turn the store could not end (a full disk, since freed) ends now, so the session takes the message.
    engine.settleStranded(id);
    if (!sessions.transition(id, "idle", "running")) {
      const state = sessions.get(id).state;
      throw new SessionBusyError(
        id,
        state,
        deps.approvals.pending(id).map((a) => a.id),
      );
    }
    const after = events.lastSeq(id);
    let turnId: string;
    try {
      turnId = engine.start(session, content);
    } catch (error) {
      // A turn that never started must not leave the session "running" forever.
      sessions.transition(id, "running", "idle");
      throw error;
    }
    return sessionEventStream({
      events,
      sessionId: id,
      after,
      heartbeatMs: deps.heartbeatMs,
      shouldClose: (event) => event?.turn_id === turnId && (event.type === "turn.end" || event.type === "approval_required"),
    });
  });

  app.get("/sessions/:id/events", (c) => {
    const id = c.req.param("id");
    sessions.get(id);
    const after = parseAfter(c.req.query("after") ?? c.req.header("last-event-id"), "after");
    // Ends once the session is idle and everything is sent; stays open through a pause, so a
    // listener sees the continuation that a decision starts.
    const idleAndSent = (seq: number | undefined) => sessions.get(id).state === "idle" && (seq === undefined || seq >= events.lastSeq(id));
    return sessionEventStream({
      events,
      sessionId: id,
      after,
      heartbeatMs: deps.heartbeatMs,
      shouldClose: (event) => (event === undefined || event.type === "turn.end") && idleAndSent(event?.seq),
    });
  });

  app.post("/sessions/:id/cancel", async (c) => {
    const id = c.req.param("id");
    const session = sessions.get(id);
    if (await engine.cancel(id, "cancelled by the user")) return c.json({ cancelled: true, session: sessions.get(id) });
    if (engine.settleStranded(id)) return c.json({ cancelled: true, session: sessions.get(id) });
    const open = sessions.openTurn(id);
    if (session.state === "awaiting_approval" && open && sessions.claimPausedTurn(open.id)) {
      engine.closePaused(id, open.id, "api");
      return c.json({ cancelled: true, session: sessions.get(id) });
    }
    return c.json({ cancelled: false, session: sessions.get(id) });
  });

  app.get("/sessions/:id/debug", (c) => {
    const id = c.req.param("id");
    sessions.get(id);
    const path = sidecarPath(deps.debugDir, id);
    const files = [...Array.from({ length: deps.debugKeep }, (_, i) => `${path}.${deps.debugKeep - i}`), path].filter((file) =>
      existsSync(file),
    );
    if (files.length === 0) throw new AgentdError("no_sidecar", `Session ${id} has no debug sidecar (agent.debug.level may be "off")`);
    return c.body(files.map((file) => readFileSync(file, "utf8")).join(""), 200, { "Content-Type": "text/plain; charset=utf-8" });
  });

  const agentQueuedOf = (record: ApprovalRecord) => agentQueued(record, sessions.find(record.session_id));
  const watchdogPending = () => (deps.watchdogApprovals?.pending() ?? []).map((request) => watchdogQueued(request));

  // One queue: the agent's and MCP clients' tool calls and the watchdog's commands (ids wd_<n>).
  app.get("/approvals", (c) => {
    const status = c.req.query("status") ?? "pending";
    if (status !== "pending" && status !== "all")
      throw new AgentdError("invalid_query", `status must be "pending" or "all", got "${status}"`, { param: "status" });
    // The raw command is shown to whoever passed the app's auth: the approver must see what will run.
    const own = (status === "pending" ? deps.approvals.pending() : deps.approvals.list()).map(agentQueuedOf);
    const approvals: QueuedApproval[] = [...own, ...watchdogPending()].sort((a, b) => a.created_at - b.created_at);
    return c.json({ approvals });
  });

  app.get("/approvals/:id", (c) => {
    const id = c.req.param("id");
    const requestId = watchdogRequestId(id);
    if (requestId === undefined) return c.json(agentQueuedOf(deps.approvals.get(id)));
    const found = watchdogPending().find((approval) => approval.id === id);
    if (!found) throw new AgentdError("approval_not_found", `No pending watchdog command request with id ${id}`);
    return c.json(found);
  });

  app.post("/approvals/:id", async (c) => {
    const body = await readRequestBody(c, decisionBody);
    const id = c.req.param("id");
    const requestId = watchdogRequestId(id);
    const decidedBy = body.decided_by ?? "api";
    if (requestId !== undefined) return c.json(decideWatchdog(deps.watchdogApprovals, requestId, body.decision, decidedBy, body.digest));
    const result = deps.approvalService.decide(id, body.decision, decidedBy, body.digest);
    return c.json({ ...result, approval: agentQueuedOf(result.approval) });
  });

  return app;
}
