import type { LogLevel } from "../core/log/index.ts";
import { isLoopbackAddress } from "../http/token.ts";

/** What `agentd serve` was asked for on its command line; each overrides the config file. */
export interface ServeOptions {
  configPath?: string;
  dataDir?: string;
  bind?: string;
  port?: number;
  logLevel?: LogLevel;
  /** Require the bearer token even on a loopback bind (a hop's remote agentd: other users share its loopback). */
  requireToken?: boolean;
}

/** Whether the API needs the bearer token: always beyond loopback, and on loopback when asked. */
export function tokenRequired(bind: string, requireToken: boolean): boolean {
  return requireToken || !isLoopbackAddress(bind);
}

export function serveArgs(options: ServeOptions): string[] {
  const args: string[] = [];
  if (options.configPath) args.push("--config", options.configPath);
  if (options.dataDir) args.push("--data-dir", options.dataDir);
  if (options.bind) args.push("--bind", options.bind);
  if (options.port !== undefined) args.push("--port", String(options.port));
  if (options.logLevel) args.push("--log-level", options.logLevel);
  if (options.requireToken) args.push("--require-token");
  return args;
}
