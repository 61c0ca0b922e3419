import type { AlertsConfig } from "../../core/config/sections/alertsConfig.ts";
import { errorMessage } from "../../core/errors/index.ts";
import type { Logger } from "../../core/log/index.ts";
import { runInBackground } from "../../core/process/index.ts";
import type { Incident, IncidentStore } from "../incidents/incidentStore.ts";
import type { SilenceStore } from "../incidents/silenceStore.ts";
import { silenceCovering } from "../incidents/silenceTargets.ts";
import { AmSilenceClient, planAmSilences, type WantedSilence } from "./alertmanagerSilences.ts";

/** One alert as Alertmanager's v2 API takes it (`POST /api/v2/alerts`). */
export interface AmAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL?: string;
}

interface Known {
  alert: Omit<AmAlert, "endsAt">;
  /** What makes a change worth sending at once: a new severity or title. */
  signature: string;
}

interface Target {
  url: string;
  silences: AmSilenceClient;
  /** Bumped by every change; the target is up to date once a post of this version went through. */
  version: number;
  sentVersion: number;
  lastSentAt: number;
  failures: number;
  nextAttemptAt: number;
  busy: boolean;
  /** Resolutions this target has not taken yet, by incident id. */
  resolved: Map<number, AmAlert>;
}

const MAX_BACKOFF_MS = 60_000;
const MAX_UNSENT_RESOLVED = 1000;

export interface AlertmanagerSinkOptions {
  config: AlertsConfig;
  store: IncidentStore;
  /** agentd's silences: each incident one covers is muted in Alertmanager by a silence of its own. */
  silences: SilenceStore;
  log: Logger;
  host: string;
  /** The status page's base URL, for the link in each alert (the worker's own when not configured). */
  statusUrl: () => string | undefined;
}

/**
 * Unresolved incidents as Alertmanager alerts. Each sync compares the store's unresolved
 * incidents with what was sent: an opening, a severity (or title) change or a resolution is posted
 * at once, and every firing alert is re-sent each `resend_interval_s` with an `endsAt` four
 * intervals ahead (as Prometheus does), so Alertmanager keeps it firing while agentd lives and
 * lets it end if agentd disappears. A resolution is sent with `endsAt` at the moment it resolved.
 * Posts run in the background, one at a time per Alertmanager; a failed one is retried with
 * backoff (1 s doubling to 60 s). Nothing here waits on the network, so the watchdog never does.
 *
 * An incident an agentd silence covers stays an alert but is muted by an Alertmanager silence
 * (created before the alert is posted, expired after a lifted one's last post): Alertmanager then
 * shows it as suppressed, sends no notification, no false "resolved", and pages again once the
 * silence ends, as its own silences do.
 */
export class AlertmanagerSink {
  readonly #known = new Map<number, Known>();
  readonly #targets: Target[];
  readonly #posts = new Set<Promise<void>>();
  /** The incidents agentd's silences cover, as of the last sync. */
  #wanted: WantedSilence[] = [];
  sent = 0;
  failed = 0;

  constructor(private readonly options: AlertmanagerSinkOptions) {
    this.#targets = options.config.alertmanager.map((base) => ({
      url: `${base.replace(/\/+$/, "")}/api/v2/alerts`,
      silences: new AmSilenceClient(base.replace(/\/+$/, ""), options.config.timeout_ms),
      version: 0,
      sentVersion: 0,
      lastSentAt: 0,
      failures: 0,
      nextAttemptAt: 0,
      busy: false,
      resolved: new Map(),
    }));
  }

  get enabled(): boolean {
    return this.#targets.length > 0;
  }

  /** Compares the store with what was sent and starts the posts due; returns at once. */
  sync(now: number): void {
    if (!this.enabled) return;
    const seen = new Set<number>();
    const active = this.options.silences.active(now);
    const wanted: WantedSilence[] = [];
    for (const incident of this.options.store.list({ state: "unresolved", limit: 1000 })) {
      seen.add(incident.id);
      const alert = this.#alertOf(incident);
      const silence = silenceCovering(incident, active);
      if (silence)
        wanted.push({
          incidentId: incident.id,
          until: silence.until,
          silenceId: silence.id,
          target: silence.target,
          reason: silence.reason,
        });
      const signature = `${incident.severity}\u0000${incident.title}\u0000${silence ? `${silence.id}@${silence.until}` : ""}`;
      const known = this.#known.get(incident.id);
      this.#known.set(incident.id, { alert, signature });
      if (known?.signature !== signature) this.#changed();
    }
    this.#wanted = wanted;
    for (const [id, known] of this.#known) {
      if (seen.has(id)) continue;
      this.#known.delete(id);
      const resolved: AmAlert = { ...known.alert, endsAt: new Date(now).toISOString() };
      for (const target of this.#targets) {
        target.resolved.set(id, resolved);
        if (target.resolved.size > MAX_UNSENT_RESOLVED) target.resolved.delete(target.resolved.keys().next().value!);
      }
      this.#changed();
    }
    const resendMs = this.options.config.resend_interval_s * 1000;
    for (const target of this.#targets) {
      if (target.busy || now < target.nextAttemptAt) continue;
      const due = target.version > target.sentVersion || (this.#known.size > 0 && now - target.lastSentAt >= resendMs);
      if (due) this.#post(target, now);
    }
  }

  /** The posts under way (a stopping supervisor waits for them; each is bounded by the timeout). */
  pending(): Promise<void>[] {
    return [...this.#posts];
  }

  #changed(): void {
    for (const target of this.#targets) target.version++;
  }

  #post(target: Target, now: number): void {
    const resendMs = this.options.config.resend_interval_s * 1000;
    const endsAt = new Date(now + 4 * resendMs).toISOString();
    const resolved = [...target.resolved];
    const alerts: AmAlert[] = [...[...this.#known.values()].map((k) => ({ ...k.alert, endsAt })), ...resolved.map(([, alert]) => alert)];
    const version = target.version;
    const wanted = this.#wanted;
    target.busy = true;
    const task = runInBackground(
      "watchdog.alertmanager_post",
      async () => {
        try {
          const plan = planAmSilences(await target.silences.list(), wanted, this.options.host, now);
          for (const { incidentId, silence } of plan.create) {
            const id = await target.silences.create(silence);
            this.options.log.info("watchdog.alertmanager_silenced", {
              url: target.url,
              incident_id: incidentId,
              silence_id: id,
              until: silence.endsAt,
            });
          }
          await this.#send(target.url, alerts);
          for (const id of plan.expire) {
            await target.silences.expire(id);
            this.options.log.info("watchdog.alertmanager_unsilenced", { url: target.url, silence_id: id });
          }
          for (const [id, alert] of resolved) if (target.resolved.get(id) === alert) target.resolved.delete(id);
          target.sentVersion = Math.max(target.sentVersion, version);
          target.lastSentAt = now;
          target.failures = 0;
          target.nextAttemptAt = 0;
          this.sent += alerts.length;
        } catch (error) {
          target.failures++;
          this.failed++;
          const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (target.failures - 1));
          target.nextAttemptAt = Date.now() + delay;
          this.options.log.warn("watchdog.alertmanager_failed", {
            url: target.url,
            attempt: target.failures,
            retry_in_ms: delay,
            error: errorMessage(error),
          });
        } finally {
          target.busy = false;
        }
      },
      { url: target.url },
      this.options.log,
    ).done;
    this.#posts.add(task);
    // runInBackground's `done` never rejects: the post's failure is already logged and counted.
    void task.then(() => this.#posts.delete(task));
  }

  async #send(url: string, alerts: AmAlert[]): Promise<void> {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(alerts),
      signal: AbortSignal.timeout(this.options.config.timeout_ms),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`Alertmanager answered ${response.status}: ${text.slice(0, 200)}`);
  }

  #alertOf(incident: Incident): Omit<AmAlert, "endsAt"> {
    const base = (this.options.config.status_url ?? this.options.statusUrl())?.replace(/\/+$/, "");
    const link = base ? `${base}/status/incidents/${incident.id}` : undefined;
    const component = typeof incident.details.component === "string" ? incident.details.component : (incident.fingerprint ?? "agentd");
    const action = incident.action
      ? `; last action: tier ${incident.tier} ${incident.action}${incident.verdict ? ` (${incident.verdict})` : ""}`
      : "";
    return {
      labels: {
        ...this.options.config.labels,
        alertname: "AgentdIncident",
        host: this.options.host,
        component,
        severity: incident.severity,
        incident: String(incident.id),
        category: incident.category,
      },
      annotations: {
        title: incident.title,
        summary: `${incident.title} on ${this.options.host}: ${incident.count} signal(s) since ${new Date(incident.first_seen).toISOString()}${action}`,
        // What the check or log said last (already redacted when recorded): the fact a pager needs first.
        ...(typeof incident.details.output === "string" && incident.details.output ? { output: incident.details.output } : {}),
        ...(link ? { status_page: link } : {}),
      },
      startsAt: new Date(incident.first_seen).toISOString(),
      ...(link ? { generatorURL: link } : {}),
    };
  }
}
