import { CounterFamily, HistogramFamily, type MetricFamily } from "../core/metrics/index.ts";
import { NOOP_TRACER, type Span, type Tracer } from "../telemetry/index.ts";

/** Who made a call: the agent's model, or an MCP client directly. */
export type CallOrigin = "agent" | "mcp";

/** The call a tool span is about. */
export interface ToolSpanCall {
  sessionId: string;
  turnId: string;
  recordId: string;
  tool: string;
  callId: string;
  via: CallOrigin;
}

/** How a turn ends (turnEngine's `#end` reasons): shown at 0 from the first scrape, so ratios of them work at once. */
const TURN_END_REASONS = ["stop", "error", "cancelled", "interrupted", "max_steps", "repeated_call"] as const;

const DECISION_BUCKETS_S = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 14400, 86400];

/**
 * The agent's metrics and spans: a turn is an `invoke_agent` span, each tool call an
 * `execute_tool` span under it (an MCP client's direct call is an `execute_tool` span of its own),
 * and a wait for a person's decision an `agentd.approval.wait` span under its call. Spans live in memory: a turn that outlives the worker (paused for approval
 * across a restart) is not traced past it.
 */
export class AgentTelemetry {
  readonly #turns = new CounterFamily(
    "agentd_agent_turns_total",
    "Agent turns that ended, by how they ended.",
    TURN_END_REASONS.map((reason) => ({ reason })),
  );
  readonly #toolCalls = new CounterFamily("agentd_agent_tool_calls_total", "Agent tool calls that ended, by tool and outcome.");
  readonly #mcpToolCalls = new CounterFamily(
    "agentd_mcp_tool_calls_total",
    "Tool calls MCP clients made, by tool and outcome (finished calls).",
  );
  readonly #decisions = new HistogramFamily(
    "agentd_agent_approval_decision_seconds",
    "Time from an approval request to its decision, by decision.",
    DECISION_BUCKETS_S,
  );
  readonly #turnSpans = new Map<string, Span>();
  readonly #toolSpans = new Map<string, Span>();
  readonly #approvalSpans = new Map<string, Span>();

  constructor(
    private readonly tracer: Tracer = NOOP_TRACER,
    /** Tool names the agent knows: any other name the model wrote counts as "unknown". */
    private readonly knownTool: (name: string) => boolean = () => true,
  ) {}

  turnStarted(sessionId: string, turnId: string, model: string): void {
    if (!this.tracer.enabled) return;
    const span = this.tracer.startSpan("invoke_agent agentd", {
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "agentd",
        "gen_ai.conversation.id": sessionId,
        "gen_ai.request.model": model,
        "agentd.turn.id": turnId,
      },
    });
    this.#turnSpans.set(turnId, span);
  }

  /** The `traceparent` a model request of this turn carries, so the proxy's span joins the turn. */
  traceparent(turnId: string): string | undefined {
    return this.#turnSpans.get(turnId)?.traceparent();
  }

  turnEnded(turnId: string, reason: string, steps: number): void {
    this.#turns.inc({ reason });
    const span = this.#turnSpans.get(turnId);
    if (!span) return;
    this.#turnSpans.delete(turnId);
    span.setAttributes({ "agentd.turn.reason": reason, "agentd.turn.steps": steps });
    span.end(reason === "error" ? { type: "turn_failed" } : undefined);
  }

  /**
   * A call begins: it runs now, or waits for a decision first (the span covers both). An agent's
   * call is a child of its turn's span; a direct (MCP) call has no turn span and starts its own trace.
   */
  toolStarted(call: ToolSpanCall): void {
    if (!this.tracer.enabled || this.#toolSpans.has(call.recordId)) return;
    const turn = this.#turnSpans.get(call.turnId);
    const name = this.#toolName(call.tool);
    this.#toolSpans.set(
      call.recordId,
      this.tracer.startSpan(`execute_tool ${name}`, {
        parent: turn,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": name,
          "gen_ai.tool.call.id": call.callId,
          "gen_ai.conversation.id": call.sessionId,
          "agentd.call.via": call.via,
        },
      }),
    );
  }

  /** Agent calls count in agentd_agent_tool_calls_total; MCP calls have their own family (agentd_mcp_tool_calls_total). */
  toolEnded(recordId: string, tool: string, outcome: string, via: CallOrigin): void {
    (via === "agent" ? this.#toolCalls : this.#mcpToolCalls).inc({ tool: this.#toolName(tool), outcome });
    const span = this.#toolSpans.get(recordId);
    if (!span) return;
    this.#toolSpans.delete(recordId);
    span.setAttributes({ "agentd.tool.outcome": outcome });
    span.end(outcome === "ok" ? undefined : { type: outcome });
  }

  approvalRequested(call: ToolSpanCall, approvalId: string, scope: string): void {
    if (!this.tracer.enabled) return;
    this.toolStarted(call);
    this.#approvalSpans.set(
      approvalId,
      this.tracer.startSpan("agentd.approval.wait", {
        parent: this.#toolSpans.get(call.recordId),
        attributes: { "agentd.approval.id": approvalId, "agentd.approval.scope": scope },
      }),
    );
  }

  approvalDecided(approvalId: string, decision: string, decidedBy: string, waitedMs: number): void {
    this.#decisions.observe({ decision }, waitedMs / 1000);
    const span = this.#approvalSpans.get(approvalId);
    if (!span) return;
    this.#approvalSpans.delete(approvalId);
    span.setAttributes({ "agentd.approval.decision": decision, "agentd.approval.decided_by": decidedBy });
    span.end();
  }

  /**
   * `pendingSince`: when each pending approval was asked for (epoch ms); `heldSessions`: sessions
   * whose text-check state is in memory (idle ones hold none, so it must not grow with the store).
   * All of it is the caller's memory: nothing here reads the store.
   */
  metricFamilies(pendingSince: readonly number[], runningTurns: number, heldSessions: number, now = Date.now()): MetricFamily[] {
    const gauge = (name: string, help: string, value: number): MetricFamily => ({ name, help, type: "gauge", samples: [{ value }] });
    let oldest = now;
    for (const since of pendingSince) oldest = Math.min(oldest, since);
    return [
      this.#turns.family(),
      this.#toolCalls.family(),
      this.#decisions.family(),
      gauge("agentd_agent_approvals_pending", "Tool calls waiting for a person's decision.", pendingSince.length),
      gauge(
        "agentd_agent_approval_oldest_pending_seconds",
        "How long the oldest pending approval has waited (0 when none waits).",
        (now - oldest) / 1000,
      ),
      gauge("agentd_agent_turns_running", "Agent turns running now.", runningTurns),
      gauge(
        "agentd_agent_sessions_held",
        "Sessions whose per-session text-check state the worker holds in memory (busy ones, or a half-typed terminal line).",
        heldSessions,
      ),
      this.#mcpToolCalls.family(),
    ];
  }

  #toolName(tool: string): string {
    return this.knownTool(tool) ? tool : "unknown";
  }
}
