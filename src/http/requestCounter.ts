import { CounterFamily, type MetricFamily } from "../core/metrics/index.ts";

/** Counts requests by matched route and status, for /metrics and /health's requests_total (requestGate.ts records them). */
export class RequestCounter {
  readonly #counts = new CounterFamily("agentd_http_requests_total", "HTTP requests by route and status.");
  total = 0;

  record(method: string, route: string, status: number): void {
    this.total++;
    this.#counts.inc({ method, route, status });
  }

  metricFamily(): MetricFamily {
    return this.#counts.family();
  }
}
