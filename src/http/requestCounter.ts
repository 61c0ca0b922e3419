import { CounterFamily, type Labels, type MetricFamily } from "../core/metrics/index.ts";

/** Counts requests by matched route and status, for /metrics and /health's requests_total (requestGate.ts records them). */
export class RequestCounter {
  readonly #counts = new CounterFamily("agentd_http_requests_total", "HTTP requests by route and status.");
  /** Label sets by method, route and status, made once: the family finds a kept object without building its key. */
  readonly #labels = new Map<string, Labels>();
  total = 0;

  record(method: string, route: string, status: number): void {
    this.total++;
    const key = `${method} ${status} ${route}`;
    let labels = this.#labels.get(key);
    if (!labels) {
      labels = { method, route, status };
      this.#labels.set(key, labels);
    }
    this.#counts.inc(labels);
  }

  metricFamily(): MetricFamily {
    return this.#counts.family();
  }
}
