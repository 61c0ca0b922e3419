import type { MetricFamily } from "../core/metrics/index.ts";

/** Counts requests by matched route and status, for /metrics and /health's requests_total (requestGate.ts records them). */
export class RequestCounter {
  #counts = new Map<string, { route: string; method: string; status: number; count: number }>();
  total = 0;

  record(method: string, route: string, status: number): void {
    this.total++;
    const key = `${method} ${route} ${status}`;
    const entry = this.#counts.get(key);
    if (entry) entry.count++;
    else this.#counts.set(key, { route, method, status, count: 1 });
  }

  metricFamily(): MetricFamily {
    return {
      name: "agentd_http_requests_total",
      help: "HTTP requests by route and status.",
      type: "counter",
      samples: [...this.#counts.values()].map((e) => ({ labels: { method: e.method, route: e.route, status: e.status }, value: e.count })),
    };
  }
}
