export { AgentdError, errorMessage } from "./agentdError.ts";
