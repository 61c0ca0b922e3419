export { AgentdError, type AgentdErrorOptions, errorMessage } from "./agentdError.ts";
export { asDiskFull, DiskFullError, onDiskFull, setStorePathForErrors } from "./diskFullError.ts";
export { type ErrorBody, errorBody, errorFromBody } from "./errorBody.ts";
export { ERROR_CODES, type ErrorCode, isErrorCode, isRelayed, type RelayedErrorCode, statusOf } from "./errorCodes.ts";
export { type ErrorType, errorTypeFor } from "./errorType.ts";
