export { AgentdError, errorMessage } from "./agentdError.ts";
export { DiskFullError, asDiskFull, onDiskFull, setStorePathForErrors } from "./diskFullError.ts";
