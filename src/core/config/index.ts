export { configSchema, DEFAULT_PORT } from "./schema.ts";
export type { AgentdConfig } from "./schema.ts";
export { ConfigError } from "./configError.ts";
export { parseConfig } from "./parseConfig.ts";
export { loadConfig } from "./loadConfig.ts";
export { resolveDataDir } from "./dataDir.ts";
export { configSecretValues } from "./secretValues.ts";
export type { LoadedConfig, LoadConfigOptions } from "./loadConfig.ts";
export { CONFIG_TEMPLATE } from "./template.ts";
