import type { Span, Tracer } from "../../telemetry/index.ts";
import type { DispatchPlan } from "../upstream/dispatcher.ts";
import type { GenAiOperation } from "./genAiMetrics.ts";

/** What /metrics and the trace know of a request from its start: its route, operation and span. */
export interface RequestTrace {
  /** The route template (`/v1/chat/completions`). */
  route: string;
  operation: GenAiOperation;
  /** A `gen_ai` client span (the no-op span while tracing is off). */
  span: Span;
  /** Tracing is on: the span's attributes are worth building. */
  recording: boolean;
  /** The provider first in line: another one answering is a failover. */
  firstProvider: string | undefined;
}

const OPERATIONS: Record<string, GenAiOperation> = { "/embeddings": "embeddings", "/completions": "text_completion" };

/**
 * Starts a request's trace. With tracing on, the span continues the client's `traceparent` and
 * the plan sent upstream carries the span's own, so the upstream joins the same trace under agentd.
 */
export function startRequestTrace(tracer: Tracer, plan: DispatchPlan, model: string): { trace: RequestTrace; plan: DispatchPlan } {
  const path = plan.endpoint?.path;
  const route = plan.route ?? (path ? `/v1${path}` : "unknown");
  const operation = (path && OPERATIONS[path]) || "chat";
  const firstProvider = plan.routes[0]?.provider.name;
  if (!tracer.enabled) return { trace: { route, operation, span: tracer.startSpan(""), recording: false, firstProvider }, plan };
  const span = tracer.startSpan(`${operation} ${model}`, {
    kind: "client",
    parent: plan.clientHeaders.get("traceparent") ?? undefined,
    attributes: {
      "gen_ai.operation.name": operation,
      "gen_ai.request.model": model,
      "gen_ai.request.stream": plan.stream,
      "http.route": route,
    },
  });
  const traceparent = span.traceparent();
  if (!traceparent) return { trace: { route, operation, span, recording: true, firstProvider }, plan };
  return { trace: { route, operation, span, recording: true, firstProvider }, plan: { ...plan, traceparent } };
}
