/**
 * Every error `code` agentd answers with, each with its HTTP status, defined here once: clients,
 * tests and the CLI match on the code, the status follows from it. `relayed` marks the few codes
 * whose status is another server's (an upstream's 4xx, a status Hono raised): only those take one.
 */
export const ERROR_CODES = {
  // Any route: the request itself.
  invalid_json: { status: 400 },
  invalid_request: { status: 400 },
  invalid_query: { status: 400 },
  unauthorized: { status: 401 },
  decision_needs_token: { status: 401 },
  forbidden: { status: 403 },
  csrf_rejected: { status: 403 },
  approver_is_agent: { status: 403 },
  agent_direct_call: { status: 403 },
  path_protected: { status: 403 },
  // agentd's privileged monitor would not do what its worker asked: not its terminal or process,
  // an escalation no person approved, a privileged terminal without the token; or it failed.
  monitor_refused: { status: 403 },
  escalation_not_approved: { status: 403 },
  terminal_needs_token: { status: 401 },
  monitor_bad_request: { status: 500 },
  monitor_failed: { status: 500 },
  monitor_unavailable: { status: 503 },
  // agentd cannot run commands as the command user it was told to (a missing user or group).
  command_user_unavailable: { status: 500 },
  // The per-session cgroups cannot be set up (not root, no delegated subtree): rlimits stand in.
  cgroup_unavailable: { status: 500 },
  // A command on which agentd's parser and bash could disagree (backslash-newline, a bare CR): refused, never shown ambiguously.
  command_ambiguous: { status: 400 },
  not_found: { status: 404 },
  request_timeout: { status: 408 },
  body_too_large: { status: 413 },
  bad_host: { status: 421 },
  http_error: { status: 500, relayed: true },
  internal_error: { status: 500 },
  too_many_connections: { status: 503 },
  disk_full: { status: 507 },

  // Core.
  invalid_config: { status: 400 },
  store_error: { status: 500 },
  store_corrupt: { status: 500 },
  lock_error: { status: 500 },
  token_untrusted: { status: 500 },
  duplicate_tool: { status: 500 },

  // Proxy.
  unsupported_parameter: { status: 400 },
  upstream_rejected: { status: 400, relayed: true },
  model_not_found: { status: 404 },
  provider_not_found: { status: 404 },
  previous_response_not_found: { status: 404 },
  response_not_found: { status: 404 },
  item_not_found: { status: 400 },
  response_not_cancellable: { status: 400 },
  rate_limit_exceeded: { status: 429 },
  upstream_auth_failed: { status: 502 },
  upstream_error: { status: 502 },
  no_provider: { status: 503 },
  upstream_unavailable: { status: 503 },
  upstream_timeout: { status: 504 },

  // PTY.
  pty_spawn_failed: { status: 400 },
  pty_bad_workdir: { status: 400 },
  pty_session_not_found: { status: 404 },
  pty_session_exited: { status: 409 },
  pty_input_too_large: { status: 413 },
  pty_limit_reached: { status: 429 },
  pty_io_error: { status: 500 },
  pty_unsupported: { status: 501 },
  pty_closed: { status: 503 },
  pty_slots_busy: { status: 503 },

  // Files.
  file_is_directory: { status: 400 },
  file_too_large: { status: 400 },
  binary_file: { status: 400 },
  file_permission_denied: { status: 403 },
  file_not_found: { status: 404 },
  directory_not_found: { status: 404 },
  file_io_error: { status: 500 },

  // Hops.
  hop_bad_destination: { status: 400 },
  hop_not_found: { status: 404 },
  hop_host_unknown: { status: 409 },
  hop_host_key_changed: { status: 409 },
  hop_name_taken: { status: 409 },
  hop_closed: { status: 410 },
  hop_auth_failed: { status: 502 },
  hop_identity_unusable: { status: 400 },
  hop_connect_failed: { status: 502 },
  hop_remote_command_failed: { status: 502 },
  hop_upload_failed: { status: 502 },
  hop_remote_start_failed: { status: 502 },
  hop_remote_error: { status: 502 },
  hop_disconnected: { status: 503 },
  hop_timeout: { status: 504 },

  // Agent and its tools.
  unknown_target: { status: 400 },
  unknown_service: { status: 400 },
  no_session: { status: 400 },
  restart_failed: { status: 400 },
  unknown_tool: { status: 400 },
  session_not_found: { status: 404 },
  call_not_found: { status: 404 },
  turn_not_found: { status: 404 },
  approval_not_found: { status: 404 },
  no_sidecar: { status: 404 },
  target_not_connected: { status: 409 },
  session_busy: { status: 409 },
  approval_already_decided: { status: 409 },
  approval_changed: { status: 409 },
  too_many_pending_approvals: { status: 429 },

  // Watchdog.
  invalid_incident_id: { status: 400 },
  invalid_silence: { status: 400 },
  incident_not_found: { status: 404 },
  silence_not_found: { status: 404 },
  no_action_request: { status: 409 },
  // Resolving by hand an incident whose check still fails (it would end its paging while it fails).
  incident_still_failing: { status: 409 },
  action_already_decided: { status: 409 },
  action_expired: { status: 409 },
  admin_call_failed: { status: 502 },

  // CLI (never sent by the daemon; the CLI's own failures share the form).
  usage_error: { status: 400 },
  unreachable: { status: 503 },
  token_rejected: { status: 401 },
} as const satisfies Record<string, { status: number; relayed?: true }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Codes whose status comes from elsewhere and is given with each error. */
export type RelayedErrorCode = { [C in ErrorCode]: (typeof ERROR_CODES)[C] extends { relayed: true } ? C : never }[ErrorCode];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CODES, value);
}

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}

export function isRelayed(code: ErrorCode): code is RelayedErrorCode {
  return "relayed" in ERROR_CODES[code];
}
