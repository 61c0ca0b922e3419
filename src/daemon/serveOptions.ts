import type { LogLevel } from "../log/index.ts";

/** What `agentd serve` was asked for on its command line; each overrides the config file. */
export interface ServeOptions {
  configPath?: string;
  dataDir?: string;
  bind?: string;
  port?: number;
  logLevel?: LogLevel;
}

export function serveArgs(options: ServeOptions): string[] {
  const args: string[] = [];
  if (options.configPath) args.push("--config", options.configPath);
  if (options.dataDir) args.push("--data-dir", options.dataDir);
  if (options.bind) args.push("--bind", options.bind);
  if (options.port !== undefined) args.push("--port", String(options.port));
  if (options.logLevel) args.push("--log-level", options.logLevel);
  return args;
}
