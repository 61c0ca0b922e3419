import { AgentdError } from "../core/errors/index.ts";

/** Stable codes of hop failures; the CLI, the agent's tools and tests match on them. */
export type HopErrorCode =
  | "hop_bad_destination"
  | "hop_host_unknown"
  | "hop_host_key_changed"
  | "hop_auth_failed"
  | "hop_connect_failed"
  | "hop_disconnected"
  | "hop_not_found"
  | "hop_name_taken"
  | "hop_remote_command_failed"
  | "hop_upload_failed"
  | "hop_remote_start_failed"
  | "hop_remote_error"
  | "hop_timeout"
  | "hop_closed";

const STATUS: Record<HopErrorCode, number> = {
  hop_bad_destination: 400,
  hop_host_unknown: 409,
  hop_host_key_changed: 409,
  hop_auth_failed: 502,
  hop_connect_failed: 502,
  hop_disconnected: 503,
  hop_not_found: 404,
  hop_name_taken: 409,
  hop_remote_command_failed: 502,
  hop_upload_failed: 502,
  hop_remote_start_failed: 502,
  hop_remote_error: 502,
  hop_timeout: 504,
  hop_closed: 410,
};

export class HopError extends AgentdError {
  declare readonly code: HopErrorCode;

  constructor(code: HopErrorCode, message: string, options: { status?: number; cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, { status: options.status ?? STATUS[code], cause: options.cause, details: options.details });
  }
}
