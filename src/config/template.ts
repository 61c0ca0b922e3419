/** What `agentd init` writes: every section, commented, with the defaults spelled out. */
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

  "pty": {
    "max_sessions": 64,
    "idle_timeout_s": 1800,
  },
}
`;
