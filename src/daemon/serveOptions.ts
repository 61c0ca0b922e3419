import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { LogFormat, LogLevel } from "../core/log/index.ts";
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
  /** How the supervisor prints log lines on stdout (the log file and the worker's pipe stay JSON). */
  logFormat?: LogFormat;
}

/**
 * Whether the API needs the bearer token: always beyond 127.0.0.1 and ::1, and there when asked. A
 * name counts as loopback only when every address it resolves to is one of the two.
 */
export async function tokenRequired(bind: string, requireToken: boolean): Promise<boolean> {
  if (requireToken) return true;
  const host = bind.replace(/^\[|\]$/g, "");
  if (isIP(host) || !isLoopbackAddress(host)) return !isLoopbackAddress(host);
  try {
    const addresses = await lookup(host, { all: true });
    return addresses.length === 0 || !addresses.every((entry) => isLoopbackAddress(entry.address));
  } catch {
    return true;
  }
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
