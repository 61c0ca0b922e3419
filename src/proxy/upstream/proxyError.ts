import { AgentdError, type AgentdErrorOptions, type ErrorCode } from "../../core/errors/index.ts";

/** The registry's codes the proxy answers with; clients and tests match on them. */
export type ProxyErrorCode = Extract<
  ErrorCode,
  | "no_provider"
  | "not_found"
  | "model_not_found"
  | "invalid_json"
  | "invalid_request"
  | "unsupported_parameter"
  | "body_too_large"
  | "previous_response_not_found"
  | "response_not_found"
  | "response_not_cancellable"
  | "item_not_found"
  | "provider_not_found"
  | "upstream_rejected"
  | "upstream_error"
  | "upstream_timeout"
  | "upstream_auth_failed"
  | "upstream_unavailable"
  | "rate_limit_exceeded"
>;

export interface ProxyErrorOptions extends AgentdErrorOptions {
  /** Seconds the client should wait before trying again (sent as Retry-After). */
  retryAfterS?: number;
  /** The honest wait is longer than agentd tells a client: no Retry-After, and x-should-retry: false, so clients show the error now. */
  waitTooLong?: boolean;
  /** The provider that was tried last (sent as x-agentd-provider). */
  provider?: string;
}

export class ProxyError extends AgentdError {
  declare readonly code: ProxyErrorCode;
  readonly retryAfterS?: number;
  readonly waitTooLong: boolean;
  readonly provider?: string;

  constructor(code: "upstream_rejected", message: string, options: ProxyErrorOptions & { status: number });
  constructor(code: ProxyErrorCode, message: string, options?: ProxyErrorOptions);
  constructor(code: ProxyErrorCode, message: string, options: ProxyErrorOptions & { status?: number } = {}) {
    // The overloads above let only upstream_rejected carry a status (the upstream's 4xx).
    if (code === "upstream_rejected") super(code, message, { ...options, status: options.status ?? 400 });
    else super(code, message, options);
    this.retryAfterS = options.retryAfterS;
    this.waitTooLong = options.waitTooLong === true;
    this.provider = options.provider;
  }
}

export const NO_PROVIDER_MESSAGE =
  'No provider is configured. Add one to agentd.jsonc: "providers": [{"name": "openai", "base_url": "https://api.openai.com/v1", "api_key": "{env:OPENAI_API_KEY}"}] — or set OPENAI_API_KEY';

export function invalidRequest(message: string, param?: string): ProxyError {
  return new ProxyError("invalid_request", message, { param });
}

export function unsupportedParameter(param: string, why: string): ProxyError {
  return new ProxyError("unsupported_parameter", `Unsupported parameter '${param}': ${why}`, { param });
}
