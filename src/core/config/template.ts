/**
 * What `agentd init` writes: every section of the schema, commented, with the common settings'
 * defaults spelled out (docs/configuration.md has the rest). tests/cli/initTemplate.test.ts fails
 * when a section is added to the schema but not here.
 */
export const CONFIG_TEMPLATE = `// agentd configuration (JSON with comments; trailing commas are fine).
// Validate with: agentd config check --config agentd.jsonc
{
  // Where the store, logs, token and debug files live. Default: ./.agentd
  // "data_dir": "/var/lib/agentd",

  "server": {
    // 127.0.0.1 by default. Any other address requires "Authorization: Bearer <token>"
    // on every route but /livez; the token is created at first start in <data_dir>/token.
    "bind": "127.0.0.1",
    "port": 7070,
    "body_limit_bytes": 10485760,
    // How long a graceful stop waits for in-flight requests.
    "drain_timeout_ms": 10000,
    // Idle connections close after this many seconds (open streams and running requests do not).
    "idle_timeout_s": 30,
    // One client address may hold this many connections; beyond, 503 (never for the token's holder).
    "max_connections_per_client": 512,
  },

  "log": {
    "level": "info", // debug | info | warn | error
    "file_max_bytes": 10485760, // <data_dir>/logs/agentd.log rotates at this size
    "file_keep": 5,
  },

  "supervisor": {
    // Past restart_max restarts within restart_window_s the supervisor stops and exits non-zero.
    "restart_max": 5,
    "restart_window_s": 600,
  },

  // LLM providers behind the OpenAI-compatible proxy at /v1. Secrets come from the environment.
  "providers": [
    // {
    //   "name": "openai",
    //   "base_url": "https://api.openai.com/v1",
    //   "api_key": "{env:OPENAI_API_KEY}",
    //   "models": ["gpt-4o*", "o4-mini"],
    //   "aliases": { "fast": "gpt-4o-mini" },
    //   "priority": 10,
    //   "weight": 1,
    //   "timeouts": { "connect_ms": 10000, "first_byte_ms": 120000, "idle_ms": 300000, "total_ms": 1800000 },
    // },
  ],

  // How the proxy retries and fails over between the providers above.
  "proxy": {
    // Attempts per request on one provider, then across all of them.
    "max_attempts": 4,
    "max_total_attempts": 8,
  },

  "pty": {
    "max_sessions": 64,
    "idle_timeout_s": 1800,
    // Variables that look like secrets (…_KEY, …_TOKEN, …_PASSWORD) are kept from the commands the
    // agent runs; list the ones commands may see.
    "pass_env": [],
    // Started as root, every command runs as this user (created at first start when it is the
    // default), never as root or agentd; groups such as "adm" let read-only diagnosis work unasked.
    "run_as": { "user": "agentd-cmd", "groups": [] },
    // Each command session's cgroup: agentd stays up whatever a command does.
    "limits": { "pids_max": 512, "memory_max_mb": 2048, "cpu_weight": 50 },
  },

  // The agent: its model calls go through the proxy above.
  "agent": {
    "model": "gpt-4o-mini",
    "max_steps": 25,
    // <data_dir>/debug/session_<id>.debug.jsonl: off | info | full (full adds whole bodies)
    "debug": { "level": "info" },
  },

  // Which tool calls run, ask a person first, or are refused: allow | ask | deny per scope,
  // then command rules (globs on the command line, first match wins).
  "approvals": {
    "policy": { "read": "allow", "exec": "allow", "fs_write": "allow", "hop": "ask", "sudo": "ask", "service_control": "ask" },
    "rules": [
      // { "match": "rm -rf /*", "action": "deny" },
    ],
    // Calls of one session waiting for a decision at once; past it a call fails at once (too_many_pending_approvals).
    "max_pending_per_session": 20,
  },

  // Services the agent may check and restart (service_status, restart_service).
  "services": [
    // { "name": "nginx", "status": "systemctl is-active nginx", "restart": "sudo systemctl restart nginx" },
  ],

  // The watchdog in the supervisor: probes, checks, rules, and an optional model (tier 3).
  "watchdog": {
    "probe": { "interval_ms": 5000, "timeout_ms": 2000, "failure_threshold": 3 },
    "verify_window_s": 30,
    // A configured command that is not pre_approved waits this long for a person's decision.
    "approval_timeout_s": 3600,
    "checks": [
      // A failing "critical" check makes the host's verdict fail; any other severity (default "error") warn.
      // { "type": "http", "name": "web", "url": "http://127.0.0.1:8080/health", "severity": "critical" },
      // { "type": "disk", "name": "root-disk", "path": "/", "min_free_percent": 10 },
    ],
    "tier3": { "enabled": false },
  },

  // SSH hops (agentd hop user@host). "~" is the worker's home: started as root, the worker runs as
  // the "agentd" user whose home is the data dir, so hops read <data_dir>/.ssh, never root's ~/.ssh.
  // Give hops their own key and known_hosts there rather than your personal ~/.ssh.
  "hops": {
    // "known_hosts": "/var/lib/agentd/.ssh/known_hosts",
    // "identity_files": ["/var/lib/agentd/.ssh/id_ed25519"],
    "remote_dir": "~/.agentd",
  },

  // Incidents as alerts in Prometheus Alertmanager (v2 API), re-sent while they fire.
  "alerts": {
    "alertmanager": [
      // "http://127.0.0.1:9093",
    ],
    "resend_interval_s": 60,
    // "status_url": "https://agentd.example.com/status",
    "labels": {},
  },

  // Traces over OTLP/HTTP; off while no endpoint is set.
  "telemetry": {
    "otlp": {
      // "endpoint": "http://127.0.0.1:4318",
      "service_name": "agentd",
    },
  },
}
`;
