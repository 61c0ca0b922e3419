import { AgentdError } from "../../core/errors/index.ts";

/** Stable codes of every error the proxy answers with; clients and tests match on them. */
export type ProxyErrorCode =
  | "no_provider"
  | "model_not_found"
  | "invalid_request"
  | "unsupported_parameter"
  | "body_too_large"
  | "previous_response_not_found"
  | "response_not_found"
  | "response_not_cancellable"
  | "item_not_found"
  | "provider_not_found"
  | "upstream_error"
  | "upstream_timeout"
  | "upstream_auth_failed"
  | "upstream_unavailable";

export class ProxyError extends AgentdError {
  declare readonly code: ProxyErrorCode;
  /** The parameter a 400 is about (OpenAI's `param`). */
  readonly param?: string;

  constructor(
    code: ProxyErrorCode,
    message: string,
    options: { status: number; param?: string; cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(code, message, options);
    this.param = options.param;
  }
}

export const NO_PROVIDER_MESSAGE =
  'No provider is configured. Add one to agentd.jsonc: "providers": [{"name": "openai", "base_url": "https://api.openai.com/v1", "api_key": "{env:OPENAI_API_KEY}"}] — or set OPENAI_API_KEY';

export function invalidRequest(message: string, param?: string): ProxyError {
  return new ProxyError("invalid_request", message, { status: 400, param });
}

export function unsupportedParameter(param: string, why: string): ProxyError {
  return new ProxyError("unsupported_parameter", `Unsupported parameter '${param}': ${why}`, { status: 400, param });
}
