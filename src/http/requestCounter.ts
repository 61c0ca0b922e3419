import { CounterFamily, type Labels, type MetricFamily } from "../core/metrics/index.ts";

/** Counts requests by matched route and status, for /metrics and /health's requests_total (requestGate.ts records them). */
export class RequestCounter {
  readonly #counts = new CounterFamily("agentd_http_requests_total", "HTTP requests by route and status.");
  /**
   * Label sets by route, method and status, made once: the family finds a kept object without
   * building its key, and neither does this.
   */
  readonly #labels = new Map<string, Map<string, Map<number, Labels>>>();
  total = 0;

  record(method: string, route: string, status: number): void {
    this.total++;
    let byMethod = this.#labels.get(route);
    if (!byMethod) {
      byMethod = new Map();
      this.#labels.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (!byStatus) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let labels = byStatus.get(status);
    if (!labels) {
      labels = { method, route, status };
      byStatus.set(status, labels);
    }
    this.#counts.inc(labels);
  }

  metricFamily(): MetricFamily {
    return this.#counts.family();
  }
}
