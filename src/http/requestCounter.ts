import { CounterFamily, type Labels, type MetricFamily } from "../core/metrics/index.ts";
import { mapEntry, newMap } from "../core/collections/index.ts";

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
    const byStatus = mapEntry(mapEntry(this.#labels, route, newMap<string, Map<number, Labels>>), method, newMap<number, Labels>);
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
