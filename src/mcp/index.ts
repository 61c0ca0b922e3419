export { createMcpCapability } from "./mcpCapability.ts";
export type { McpCapabilityOptions } from "./mcpCapability.ts";
