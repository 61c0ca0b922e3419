import type { SignatureConfig } from "./watchdogConfig.ts";

/**
 * agentd's own failure catalog, grown from seed 004's categories: A (the daemon itself), B
 * (upstream providers), C (parser/format), D (clients: agent tools, PTYs, hops), E (config/state).
 * Event-based signatures match the stable log events of the worker; regex ones catch text that
 * comes from libraries or the runtime. Signals the supervisor makes itself (worker.crashed,
 * worker.unresponsive, worker.unhealthy, check.*) are in builtinSignals.ts.
 */
const upstream = (id: string, title: string, cause: string | string[], severity: SignatureConfig["severity"] = "error"): SignatureConfig => ({
  id,
  title,
  category: "upstream",
  severity,
  event: "upstream.error",
  fields: { cause },
  component: "provider:{provider}",
});

export const BUILTIN_SIGNATURES: readonly SignatureConfig[] = [
  // A — the daemon
  { id: "port.in_use", title: "Port already in use", category: "daemon", severity: "critical", event: "http.listen_failed", fields: { cause: "port_in_use" }, component: "worker" },
  { id: "worker.listen_failed", title: "Worker cannot listen", category: "daemon", severity: "critical", event: "http.listen_failed", fields: { cause: "listen" }, component: "worker" },
  { id: "worker.unhandled_error", title: "Unhandled error in a request", category: "daemon", severity: "error", event: "http.unhandled_error", component: "worker" },
  { id: "worker.drain_timeout", title: "Graceful stop hit its deadline", category: "daemon", severity: "warning", event: "worker.drain_timeout", component: "worker" },
  { id: "worker.out_of_memory", title: "Out of memory", category: "daemon", severity: "critical", regex: "out of memory|Cannot allocate memory|ENOMEM|heap limit", component: "worker" },
  // B — upstream providers
  upstream("upstream.rate_limited", "Upstream rate limit (429)", "http_429", "warning"),
  upstream("upstream.server_error", "Upstream server error (5xx)", "http_5xx"),
  upstream("upstream.auth_failed", "Upstream rejected the API key (401/403)", "auth", "critical"),
  upstream("upstream.connect_failed", "Upstream unreachable", "connect"),
  upstream("upstream.connect_timeout", "Upstream connect timeout", "connect_timeout"),
  upstream("upstream.first_byte_timeout", "Upstream sent nothing before the first-byte timeout", "first_byte_timeout"),
  upstream("upstream.stream_idle_timeout", "Upstream stream went idle", "idle_timeout"),
  upstream("upstream.total_timeout", "Upstream request exceeded its total time", "total_timeout"),
  upstream("upstream.reset", "Upstream connection reset", "reset"),
  upstream("upstream.conflict", "Upstream conflict/timeout status (408/409)", ["http_408", "http_409"], "warning"),
  { id: "upstream.tls", title: "TLS certificate problem with an upstream", category: "upstream", severity: "critical", event: "upstream.error", regex: "certificate|CERT_|self[- ]signed", component: "provider:{provider}" },
  { id: "upstream.dns", title: "Upstream host name does not resolve", category: "upstream", severity: "error", event: "upstream.error", regex: "ENOTFOUND|EAI_AGAIN|getaddrinfo", component: "provider:{provider}" },
  { id: "upstream.blocked", title: "Upstream edge blocked the request (Cloudflare)", category: "upstream", severity: "error", event: "upstream.error", regex: "error code: 10\\d\\d|cloudflare", component: "provider:{provider}" },
  { id: "breaker.open", title: "Provider circuit breaker opened", category: "upstream", severity: "warning", event: "breaker.open", component: "provider:{provider}" },
  { id: "upstream.all_down", title: "Every provider for a model is unavailable", category: "config_state", severity: "critical", regex: "upstream_unavailable", component: "proxy" },
  // C — parser / format
  upstream("upstream.malformed", "Upstream sent malformed data", "malformed", "warning"),
  { id: "upstream.bad_request", title: "Upstream refused the request (4xx)", category: "format", severity: "warning", event: "upstream.error", fields: { cause: "http_4xx" }, component: "provider:{provider}" },
  { id: "proxy.quirk_learned", title: "Provider rejected a parameter (quirk learned)", category: "format", severity: "info", event: "proxy.quirk_learned", component: "provider:{provider}" },
  // D — clients: agent tools, PTY sessions, hops
  { id: "tool.timeout", title: "Tool call timed out", category: "client", severity: "warning", event: "tool.end", fields: { outcome: "timeout" }, component: "tool:{tool}" },
  { id: "tool.failed", title: "Tool call failed", category: "client", severity: "warning", event: "tool.end", fields: { outcome: "error" }, component: "tool:{tool}" },
  { id: "pty.limit_reached", title: "PTY session limit reached", category: "client", severity: "warning", event: "pty.limit_reached", component: "pty" },
  { id: "hop.dropped", title: "Hop connection dropped", category: "client", severity: "warning", event: "hop.disconnected", component: "hop:{host}" },
  { id: "hop.reconnect_failed", title: "Hop could not reconnect", category: "client", severity: "error", event: "hop.reconnect_failed", component: "hop:{host}" },
  { id: "model.context_overflow", title: "Conversation exceeds the model's context", category: "client", severity: "warning", regex: "context_length_exceeded", component: "agent" },
  // E — config / state
  { id: "store.busy", title: "SQLite store busy", category: "config_state", severity: "error", regex: "SQLITE_BUSY|database is locked", component: "store" },
  { id: "store.corrupt", title: "SQLite store corrupt", category: "config_state", severity: "critical", regex: "SQLITE_CORRUPT|SQLITE_NOTADB|disk image is malformed|file is not a database", component: "store" },
  { id: "store.not_writable", title: "Store not writable", category: "config_state", severity: "error", regex: "store not writable|SQLITE_READONLY|SQLITE_FULL", component: "store" },
  { id: "disk.full", title: "Disk full", category: "config_state", severity: "critical", regex: "ENOSPC|No space left on device", component: "host" },
];
