import type { HealthCheck } from "../../core/health/index.ts";
import type { BreakerSnapshot } from "./circuitBreaker.ts";
import type { ProviderRuntime } from "./providerRuntime.ts";
import type { AttemptTimeouts } from "./upstreamAttempt.ts";

export type ProviderState = "ok" | "open" | "half_open" | "auth_failed";

/** One provider as the status page and `agentd status` show it. */
export interface ProviderStatus {
  name: string;
  state: ProviderState;
  breaker: BreakerSnapshot;
  wire: "chat" | "responses" | "anthropic";
  priority: number;
  weight: number;
  requests: number;
  errors: number;
  /** Decayed recent error rate, 0–1 (drives routing weight). */
  error_rate: number;
  p50_ms: number | null;
  p95_ms: number | null;
  quirks: string[];
  timeouts: AttemptTimeouts;
}

export function providerStatus(provider: ProviderRuntime): ProviderStatus {
  const breaker = provider.breaker.snapshot();
  const state: ProviderState = breaker.state === "closed" ? "ok" : provider.authFailed ? "auth_failed" : breaker.state;
  const round = (value: number | undefined) => (value === undefined ? null : Math.round(value * 100) / 100);
  return {
    name: provider.name,
    state,
    breaker,
    wire: provider.config.wire,
    priority: provider.config.priority,
    weight: provider.config.weight,
    requests: provider.requests,
    errors: provider.errors,
    error_rate: Math.round(provider.health.errorRate() * 1000) / 1000,
    p50_ms: round(provider.latency.percentile(50)),
    p95_ms: round(provider.latency.percentile(95)),
    quirks: [...provider.quirks].sort(),
    timeouts: { ...provider.timeouts },
  };
}

/** `proxy:providers`: warn while some breakers are open, fail when none is usable. */
export function providersHealth(statuses: readonly ProviderStatus[]): HealthCheck {
  const time = new Date().toISOString();
  if (statuses.length === 0) {
    return {
      key: "proxy:providers",
      status: "pass",
      observedValue: 0,
      observedUnit: "providers",
      output: "no provider configured; the proxy answers 503 no_provider",
      time,
    };
  }
  const down = statuses.filter((s) => s.state === "open" || s.state === "auth_failed");
  const usable = statuses.length - down.length;
  const output =
    down.length === 0
      ? `${usable} of ${statuses.length} providers available`
      : `unavailable: ${down.map((s) => `${s.name} (${s.state})`).join(", ")}`;
  return {
    key: "proxy:providers",
    status: usable === 0 ? "fail" : down.length > 0 ? "warn" : "pass",
    observedValue: usable,
    observedUnit: "providers",
    output,
    time,
  };
}
