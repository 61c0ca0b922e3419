import { NOOP_TRACER, type Span, type Tracer } from "../telemetry/index.ts";
import type { Decision } from "./checks/signal.ts";
import type { TrackedIncident } from "./incidents/trackedIncident.ts";

/**
 * The watchdog's spans and action counts: each action is a `watchdog.action` span, and its
 * verification a `watchdog.verify` span under it that ends with the verdict.
 */
export class WatchdogTracing {
  /** Actions that ended, by `tier|action|verdict`. */
  readonly actions: Record<string, number> = {};
  readonly #actionSpans = new Map<number, Span>();
  readonly #verifySpans = new Map<number, Span>();

  constructor(private readonly tracer: Tracer = NOOP_TRACER) {}

  actionStarted(tracked: TrackedIncident, decision: Decision): Span {
    const span = this.tracer.startSpan(`watchdog.action ${decision.action}`, {
      attributes: {
        "agentd.incident.id": tracked.id,
        "agentd.incident.component": tracked.fingerprint,
        "agentd.incident.severity": tracked.severity,
        "agentd.watchdog.tier": decision.tier,
        "agentd.watchdog.action": decision.action,
      },
    });
    if (this.tracer.enabled) this.#actionSpans.set(tracked.id, span);
    return span;
  }

  actionEnded(span: Span, ok: boolean): void {
    span.end(ok ? undefined : { type: "action_failed" });
  }

  verifyStarted(tracked: TrackedIncident): void {
    if (!this.tracer.enabled) return;
    const parent = this.#actionSpans.get(tracked.id);
    this.#actionSpans.delete(tracked.id);
    this.#verifySpans.set(
      tracked.id,
      this.tracer.startSpan("watchdog.verify", { parent, attributes: { "agentd.incident.id": tracked.id } }),
    );
  }

  /** An action's verdict: counted, and its verification span (if any) ended. */
  concluded(incidentId: number, tier: number, action: string, verdict: string): void {
    const key = `${tier}|${action}|${verdict}`;
    this.actions[key] = (this.actions[key] ?? 0) + 1;
    this.#actionSpans.delete(incidentId);
    const span = this.#verifySpans.get(incidentId);
    if (!span) return;
    this.#verifySpans.delete(incidentId);
    span.setAttributes({ "agentd.watchdog.verdict": verdict });
    span.end(verdict === "success" ? undefined : { type: `verdict_${verdict}` });
  }
}
