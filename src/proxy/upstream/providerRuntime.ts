import type { Logger } from "../../core/log/index.ts";
import { CircuitBreaker, type BreakerSettings } from "./circuitBreaker.ts";
import { LatencyWindow } from "./latencyWindow.ts";
import { createModelMatcher, type ModelMatcher } from "./modelMatcher.ts";
import type { ProviderConfig } from "../../core/config/sections/providerConfig.ts";
import { ProviderHealth } from "./providerHealth.ts";
import { RateLimitWindow } from "./rateLimitWindow.ts";
import type { AttemptTimeouts } from "./upstreamAttempt.ts";
import { normalizeBaseUrl } from "./upstreamUrl.ts";

/** One configured provider and everything the proxy learns about it while running. */
export class ProviderRuntime {
  readonly name: string;
  /** The normalised base URL, endpoints appended to it. */
  readonly baseUrl: string;
  readonly chatUrl: string;
  readonly responsesUrl: string;
  /** Where completions go on this provider's wire. */
  readonly completionUrl: string;
  readonly modelsUrl: string;
  readonly matcher: ModelMatcher;
  readonly breaker: CircuitBreaker;
  readonly health = new ProviderHealth();
  readonly latency = new LatencyWindow();
  /** Until when its last 429 asked to be left alone (a rate limit does not open the breaker). */
  readonly rateLimit = new RateLimitWindow();
  /** Live deadlines: start as configured, the admin route may raise them within bounds. */
  readonly timeouts: AttemptTimeouts;
  /** Parameters this provider rejected, dropped from what we send (see quirkRules.ts). */
  readonly quirks = new Set<string>();
  requests = 0;
  errors = 0;
  /** The last failure was 401/403 and nothing succeeded since. */
  authFailed = false;

  constructor(
    readonly config: ProviderConfig,
    breakerSettings: BreakerSettings,
    logger: Logger,
  ) {
    this.name = config.name;
    const base = normalizeBaseUrl(config.base_url);
    this.baseUrl = base;
    this.chatUrl = `${base}/chat/completions`;
    this.responsesUrl = `${base}/responses`;
    this.modelsUrl = `${base}/models`;
    const wireUrls = { chat: this.chatUrl, responses: this.responsesUrl, anthropic: `${base}/messages` };
    this.completionUrl = wireUrls[config.wire];
    this.matcher = createModelMatcher(config.models, config.aliases);
    this.timeouts = { ...config.timeouts };
    this.breaker = new CircuitBreaker(breakerSettings, (transition) => {
      const fields = {
        provider: this.name,
        cause: transition.cause,
        ...(transition.cooldownMs !== undefined ? { cooldown_ms: transition.cooldownMs } : {}),
      };
      if (transition.to === "open") logger.warn("breaker.open", fields);
      else if (transition.to === "half_open") logger.info("breaker.half_open", fields);
      else logger.info("breaker.close", { provider: this.name });
    });
  }
}
