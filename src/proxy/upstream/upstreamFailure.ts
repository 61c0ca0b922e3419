/**
 * Why one upstream attempt failed. The cause names are stable: they are the `cause` field of the
 * `upstream.error` log line the watchdog's signature catalog matches.
 */
export type FailureCause =
  | "connect"
  | "connect_timeout"
  | "first_byte_timeout"
  | "idle_timeout"
  | "total_timeout"
  | "reset"
  | "http_408"
  | "http_409"
  | "http_429"
  | "http_5xx"
  | "http_4xx"
  | "auth"
  | "redirect"
  | "malformed";

export class UpstreamFailure extends Error {
  /** Logged as `cause`; named `kind` because Error already owns `cause`. */
  readonly kind: FailureCause;
  /** HTTP status of the upstream answer; 0 when there was none. */
  readonly status: number;
  /** Delay the upstream asked for (Retry-After / retry-after-ms), in ms. */
  readonly retryAfterMs?: number;
  /** The upstream's error body (truncated), for 4xx reporting and quirk learning. */
  readonly body?: string;

  constructor(cause: FailureCause, message: string, options: { status?: number; retryAfterMs?: number; body?: string } = {}) {
    super(message);
    this.name = "UpstreamFailure";
    this.kind = cause;
    this.status = options.status ?? 0;
    this.retryAfterMs = options.retryAfterMs;
    this.body = options.body;
  }
}

export function causeForStatus(status: number): FailureCause {
  // A provider that moved: its base_url is out of date, whatever the client sent.
  if (status < 400) return "redirect";
  if (status === 401 || status === 403) return "auth";
  if (status === 408) return "http_408";
  if (status === 409) return "http_409";
  if (status === 429) return "http_429";
  if (status >= 500) return "http_5xx";
  return "http_4xx";
}
