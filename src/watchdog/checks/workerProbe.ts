import { errorMessage } from "../../core/errors/index.ts";
import type { Signal } from "./signal.ts";
import type { WatchdogConfig } from "../../core/config/sections/watchdogConfig.ts";

export interface ProbeTarget {
  url: string;
  pid: number;
  token?: string;
}

/**
 * Probes the worker's /livez and /health on a timer. `failure_threshold` failures in a row raise
 * `worker.unresponsive` (no /livez answer: hung or dead) or `worker.unhealthy` (/health says fail),
 * once per episode. A worker that is not listening (starting, restarting) is not probed.
 */
export class WorkerProbe {
  #target: ProbeTarget | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #livezFailures = 0;
  #healthFailures = 0;
  #lastOk = false;
  #lastError: string | undefined;
  #generation = 0;

  constructor(
    private readonly config: WatchdogConfig["probe"],
    private readonly onSignal: (signal: Signal) => void,
    private readonly now: () => number = Date.now,
  ) {}

  attach(target: ProbeTarget): void {
    this.detach();
    this.#target = target;
    this.#schedule(0);
  }

  detach(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#target = undefined;
    this.#generation++;
    this.#livezFailures = 0;
    this.#healthFailures = 0;
    this.#lastOk = false;
  }

  get healthy(): boolean {
    return this.#target !== undefined && this.#lastOk;
  }

  detail(): Record<string, unknown> {
    return {
      worker_listening: this.#target !== undefined,
      probe_ok: this.#lastOk,
      livez_failures: this.#livezFailures,
      health_failures: this.#healthFailures,
      ...(this.#lastError ? { last_probe_error: this.#lastError } : {}),
    };
  }

  #schedule(delayMs: number): void {
    const generation = this.#generation;
    this.#timer = setTimeout(async () => {
      const started = this.now();
      await this.probeOnce();
      if (generation === this.#generation) this.#schedule(Math.max(0, this.config.interval_ms - (this.now() - started)));
    }, delayMs);
  }

  async probeOnce(): Promise<void> {
    const target = this.#target;
    if (!target) return;
    const generation = this.#generation;
    const headers: Record<string, string> = target.token ? { authorization: `Bearer ${target.token}` } : {};
    let livezOk = false;
    let healthOk = true;
    try {
      const livez = await fetch(`${target.url}/livez`, { signal: AbortSignal.timeout(this.config.timeout_ms) });
      await livez.arrayBuffer();
      livezOk = livez.ok;
      if (!livezOk) this.#lastError = `/livez answered ${livez.status}`;
      if (livezOk) {
        const health = await fetch(`${target.url}/health`, { headers, signal: AbortSignal.timeout(this.config.timeout_ms) });
        const body = await health.text();
        healthOk = health.status !== 503 || !failsOnItsOwn(body);
        if (!healthOk) this.#lastError = `/health: ${body.slice(0, 200)}`;
      }
    } catch (error) {
      this.#lastError = `/livez: ${errorMessage(error)}`;
    }
    if (generation !== this.#generation) return;
    this.#livezFailures = livezOk ? 0 : this.#livezFailures + 1;
    this.#healthFailures = livezOk && !healthOk ? this.#healthFailures + 1 : 0;
    this.#lastOk = livezOk && healthOk;
    if (this.#lastOk) this.#lastError = undefined;
    const threshold = this.config.failure_threshold;
    if (this.#livezFailures === threshold)
      this.onSignal(this.#signal("worker.unresponsive", "Worker does not answer /livez", "critical", target));
    if (this.#healthFailures === threshold)
      this.onSignal(this.#signal("worker.unhealthy", "Worker reports failing health", "error", target));
  }

  #signal(id: string, title: string, severity: Signal["severity"], target: ProbeTarget): Signal {
    return {
      id,
      title,
      category: "daemon",
      severity,
      component: "worker",
      ts: this.now(),
      fields: { pid: target.pid, failures: this.config.failure_threshold },
      line: this.#lastError,
    };
  }
}

/**
 * Whether a failing /health document blames the worker itself. Upstream checks (`proxy:*`) fail
 * while every provider's breaker is open; a restart cannot fix that and would forget the breakers.
 */
export function failsOnItsOwn(body: string): boolean {
  try {
    const document = JSON.parse(body) as { checks?: Record<string, Array<{ status?: string }>> };
    return Object.entries(document.checks ?? {}).some(
      ([key, results]) => !key.startsWith("proxy:") && results.some((r) => r.status === "fail"),
    );
  } catch {
    return true;
  }
}
