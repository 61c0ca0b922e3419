import type { Logger } from "../core/log/index.ts";
import type { MetricFamily } from "../core/metrics/index.ts";
import { runInBackground } from "../core/process/index.ts";
import type { HostVerdict } from "../status/hostVerdict.ts";
import { verdictMetricFamily } from "../status/verdictMetric.ts";

/**
 * The host's verdict for /metrics. It reads /health's sources (some of which wait), so families()
 * cannot compute it: the scrape refreshes it first (createApp's beforeScrape), scrapes at the same
 * time share one computation, and families() shows the verdict last computed.
 */
export class LatestVerdict {
  #verdict: HostVerdict | undefined;
  #running: Promise<void> | undefined;

  constructor(
    private readonly compute: () => Promise<HostVerdict>,
    private readonly logger: Logger,
  ) {}

  /** Computes the verdict now (or joins the computation under way); settles when it is held. A failure is logged and counted, never thrown. */
  refresh(): Promise<void> {
    this.#running ??= runInBackground(
      "metrics.verdict",
      async () => {
        this.#verdict = await this.compute();
      },
      {},
      this.logger,
    ).done.finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** `agentd_verdict` as last computed; none before the first computation ends. */
  families(): MetricFamily[] {
    return this.#verdict ? [verdictMetricFamily(this.#verdict)] : [];
  }
}
