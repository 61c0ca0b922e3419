/** OpenAI's error `type`, which SDK clients branch on; it follows from the HTTP status alone. */
export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "conflict_error"
  | "request_too_large"
  | "rate_limit_error"
  | "server_error";

const BY_STATUS: Readonly<Record<number, ErrorType>> = {
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  409: "conflict_error",
  413: "request_too_large",
  429: "rate_limit_error",
};

export function errorTypeFor(status: number): ErrorType {
  if (status >= 500) return "server_error";
  return BY_STATUS[status] ?? "invalid_request_error";
}
