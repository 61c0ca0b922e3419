import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { AgentdConfig } from "./schema.ts";

/**
 * Data dir: --data-dir, AGENTD_DATA_DIR, the config's data_dir, else ./.agentd. A file of its own,
 * free of the schemas, so the supervisor resolves it without loading zod.
 */
export function resolveDataDir(options: {
  flag?: string;
  env?: Record<string, string | undefined>;
  config: Pick<AgentdConfig, "data_dir">;
  cwd?: string;
}): string {
  const env = options.env ?? process.env;
  const chosen = options.flag ?? env.AGENTD_DATA_DIR ?? options.config.data_dir ?? ".agentd";
  const expanded = chosen.startsWith("~/") ? join(homedir(), chosen.slice(2)) : chosen;
  return resolve(options.cwd ?? process.cwd(), expanded);
}
