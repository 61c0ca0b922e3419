import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_PORT, loadConfig, resolveDataDir } from "../core/config/index.ts";
import { readReadyFile, type ReadyInfo } from "../daemon/readyFile.ts";

export interface LocateOptions {
  url?: string;
  token?: string;
  configPath?: string;
  dataDir?: string;
  env?: Record<string, string | undefined>;
}

/** Where the CLI will call, and, for the message when nothing answers there, what it tried. */
export interface LocatedDaemon {
  url: string;
  token?: string;
  /** Each place looked at, in order, with what it gave: said when the daemon cannot be reached. */
  tried: string[];
  /** The config that could not be read (`file:line:column: reason`), when one was in the way. */
  configProblem?: string;
}

export interface LocatorIo {
  readReady: (dataDir: string) => ReadyInfo | undefined;
  readToken: (dataDir: string) => string | undefined;
  loadConfig: typeof loadConfig;
}

const IO: LocatorIo = {
  readReady: readReadyFile,
  readToken: (dataDir) => {
    const file = join(dataDir, "token");
    return existsSync(file) ? readFileSync(file, "utf8").trim() : undefined;
  },
  loadConfig,
};

/**
 * Finds the local daemon without letting a broken config stand in the way: --url/AGENTD_URL (with
 * a token, nothing else is read), then --data-dir/AGENTD_DATA_DIR's ready.json, then the config's
 * data dir (the default `./.agentd` when the config cannot be read) and its ready.json, then the
 * config's port (or 7070). A named URL gets the local token only when it is the local daemon's own.
 */
export function locateDaemon(options: LocateOptions, io: LocatorIo = IO): LocatedDaemon {
  const env = options.env ?? process.env;
  const token = options.token ?? env.AGENTD_TOKEN;
  const named = (options.url ?? env.AGENTD_URL)?.replace(/\/+$/, "");
  if (named && token) return { url: named, token, tried: [] };
  const tried: string[] = [];
  const found = (dataDir: string, ready: ReadyInfo): LocatedDaemon => ({
    url: named ?? ready.url,
    token: token ?? (!named || named === ready.url ? io.readToken(dataDir) : undefined),
    tried,
  });
  const explicitDir = options.dataDir ?? env.AGENTD_DATA_DIR;
  const flagged = explicitDir ? resolveDataDir({ flag: explicitDir, env, config: {} }) : undefined;
  if (flagged) {
    const ready = io.readReady(flagged);
    if (ready) return found(flagged, ready);
    tried.push(`${options.dataDir ? "--data-dir" : "AGENTD_DATA_DIR"} ${flagged}: no ready.json`);
  }
  let port = DEFAULT_PORT;
  let dataDir: string;
  let configProblem: string | undefined;
  try {
    const { config, path } = io.loadConfig({ explicitPath: options.configPath, env });
    dataDir = resolveDataDir({ flag: options.dataDir, env, config });
    port = config.server.port || DEFAULT_PORT;
    tried.push(path ? `config ${path}` : "no config file (the defaults)");
  } catch (error) {
    configProblem = (error as Error).message;
    dataDir = resolveDataDir({ flag: options.dataDir, env, config: {} });
    tried.push(`config: ${configProblem}`);
  }
  if (dataDir !== flagged) {
    const ready = io.readReady(dataDir);
    if (ready) return { ...found(dataDir, ready), ...(configProblem ? { configProblem } : {}) };
    tried.push(`data dir ${dataDir}: no ready.json`);
  }
  const url = named ?? `http://127.0.0.1:${port}`;
  if (!named) tried.push(`${configProblem ? "the default port" : "the config's port"}: ${url}`);
  const localToken = token ?? (named ? undefined : io.readToken(dataDir));
  return { url, ...(localToken ? { token: localToken } : {}), tried, ...(configProblem ? { configProblem } : {}) };
}
