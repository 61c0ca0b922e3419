import type { RuleConfig } from "../../core/config/sections/watchdogConfig.ts";

const rule = (
  id: string,
  signal: string,
  count: number,
  window_s: number,
  action: RuleConfig["do"],
  cooldown_s = [30, 60, 300],
): RuleConfig => ({
  id,
  when: { signal, count, window_s },
  do: action,
  cooldown_s,
});

/**
 * Tier 1 as shipped: the reflexes for the catalog's known failures. A crashed worker is restarted
 * by the supervisor's restart policy (backoff and cap are its guards), so its rule has no cooldown.
 */
export const DEFAULT_RULES: readonly RuleConfig[] = [
  rule("restart-crashed-worker", "worker.crashed", 1, 60, "restart_worker", []),
  rule("restart-hung-worker", "worker.unresponsive", 1, 60, "restart_worker"),
  rule("restart-unhealthy-worker", "worker.unhealthy", 1, 60, "restart_worker", [60, 300, 900]),
  rule("restart-oversized-worker", "check.memory", 1, 60, "restart_worker", [300, 900]),
  rule("alert-crash-loop", "crash_loop", 1, 60, "alert", [0]),
  rule("alert-flapping-check", "check.flapping", 1, 60, "alert", [3600]),
  rule("alert-port-in-use", "port.in_use", 1, 60, "alert", [0]),
  rule("breaker-on-5xx-storm", "upstream.server_error", 5, 60, "open_breaker"),
  rule("breaker-on-unreachable", "upstream.connect_failed", 5, 60, "open_breaker"),
  rule("breaker-on-connect-timeouts", "upstream.connect_timeout", 5, 60, "open_breaker"),
  rule("breaker-on-resets", "upstream.reset", 5, 120, "open_breaker"),
  rule("switch-on-rate-limit", "upstream.rate_limited", 10, 60, "switch_provider"),
  rule("alert-bad-key", "upstream.auth_failed", 1, 60, "alert", [0]),
  rule("alert-tls", "upstream.tls", 1, 60, "alert", [0]),
  rule("raise-first-byte-timeout", "upstream.first_byte_timeout", 3, 300, "raise_timeout", [300, 900]),
  rule("raise-idle-timeout", "upstream.stream_idle_timeout", 3, 300, "raise_timeout", [300, 900]),
  rule("alert-malformed", "upstream.malformed", 5, 300, "alert", [300]),
  // A model whose calls keep reaching the client as text: its agents stall. Failing over is skipped
  // (and the incident says so) when no other provider serves the model.
  rule("switch-on-unparsed-tool-calls", "proxy.tool_calls_unparsed", 5, 300, "switch_provider", [300, 900]),
  rule("alert-store-corrupt", "store.corrupt", 1, 60, "alert", [0]),
  rule("alert-disk-full", "disk.full", 1, 60, "alert", [0]),
  rule("alert-out-of-memory", "worker.out_of_memory", 1, 60, "alert", [0]),
  rule("alert-pty-limit", "pty.limit_reached", 3, 300, "alert", [300]),
  rule("alert-tool-timeouts", "tool.timeout", 5, 300, "alert", [300]),
  rule("alert-tool-failures", "tool.failed", 5, 300, "alert", [300]),
  // The proxy's own breaker opening is self-healing; recorded on the provider's incident only.
  rule("note-breaker-open", "breaker.open", 1, 60, "ignore", []),
  rule("note-quirk", "proxy.quirk_learned", 1, 60, "ignore", []),
];
