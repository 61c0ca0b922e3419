import { errorMessage } from "../../core/errors/index.ts";
import type { Logger } from "../../core/log/index.ts";
import type { IncidentStore } from "../incidents/incidentStore.ts";
import type { WatchdogConfig } from "../../core/config/sections/watchdogConfig.ts";

export interface AlertInput {
  incidentId: number;
  title: string;
  severity: string;
  message: string;
  kind?: "alert" | "resolved";
}

const KEPT_ALERTS = 20;

/**
 * Alerts: a `watchdog.alert` log line, the alert kept on the incident (the page shows it as a
 * banner) and, when configured, a webhook POST retried with backoff. A webhook that stays down
 * is logged, never fatal.
 */
export class AlertSink {
  /** Webhook deliveries under way, one chain per incident so its alert and its resolution arrive in order. */
  readonly #deliveries = new Map<number, Promise<void>>();

  constructor(
    private readonly store: IncidentStore,
    private readonly log: Logger,
    private readonly webhook: WatchdogConfig["webhook"],
    private readonly now: () => number = Date.now,
  ) {}

  /** Records the alert at once; the promise is its webhook delivery, which runs in the background. */
  alert(input: AlertInput): Promise<void> {
    const at = this.now();
    const kind = input.kind ?? "alert";
    this.log.warn(kind === "alert" ? "watchdog.alert" : "watchdog.alert_resolved", {
      incident_id: input.incidentId,
      title: input.title,
      severity: input.severity,
      message: input.message,
    });
    const incident = this.store.get(input.incidentId);
    const alerts = Array.isArray(incident.details.alerts) ? (incident.details.alerts as unknown[]) : [];
    this.store.mergeDetails(input.incidentId, {
      alerts: [...alerts, { at, kind, message: input.message }].slice(-KEPT_ALERTS),
      alerted_at: at,
    });
    this.store.addEvent(input.incidentId, kind === "alert" ? "alert" : "alert_resolved", input.message, {}, at);
    if (!this.webhook) return Promise.resolve();
    const body = {
      kind,
      incident_id: input.incidentId,
      title: input.title,
      severity: input.severity,
      message: input.message,
      at: new Date(at).toISOString(),
    };
    const id = input.incidentId;
    const delivery: Promise<void> = (this.#deliveries.get(id) ?? Promise.resolve())
      .then(() => this.#post(body))
      .finally(() => {
        if (this.#deliveries.get(id) === delivery) this.#deliveries.delete(id);
      });
    this.#deliveries.set(id, delivery);
    return delivery;
  }

  /** The webhook deliveries still under way. */
  pending(): Promise<void>[] {
    return [...this.#deliveries.values()];
  }

  async #post(body: Record<string, unknown>): Promise<void> {
    const webhook = this.webhook!;
    let delay = 500;
    for (let attempt = 1; attempt <= webhook.retries + 1; attempt++) {
      try {
        const response = await fetch(webhook.url, {
          method: "POST",
          headers: { "content-type": "application/json", ...webhook.headers },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(webhook.timeout_ms),
        });
        await response.arrayBuffer();
        if (response.ok) return;
        this.log.warn("watchdog.webhook_failed", { attempt, status: response.status });
      } catch (error) {
        this.log.warn("watchdog.webhook_failed", { attempt, error: errorMessage(error) });
      }
      if (attempt <= webhook.retries) {
        await Bun.sleep(delay);
        delay *= 2;
      }
    }
  }
}
