import type { AgentdConfig } from "../../core/config/schema.ts";
import type { Logger } from "../../core/log/index.ts";
import type { CommandIdentity, WorkerAccount } from "../../core/process/index.ts";
import { localIdentityHost, ownPathProblems } from "../../core/process/identity/index.ts";
import type { Database } from "../../core/store/index.ts";
import { openCommandCgroups } from "../commandCgroups.ts";
import type { CommandMonitor } from "./commandMonitor.ts";

export interface StartMonitorOptions {
  identity: CommandIdentity;
  account: WorkerAccount;
  config: AgentdConfig;
  db: Database;
  dataDir: string;
  configPath?: string;
  token?: string;
  workerPid: () => number | undefined;
  reload: () => void;
  log: Logger;
}

/**
 * The supervisor's monitor for a worker that runs as a service user. Loaded only then: the spawner,
 * the file rules and the shell parser have no place in a supervisor whose worker is root.
 */
export async function startMonitor(options: StartMonitorOptions): Promise<CommandMonitor> {
  const { CommandMonitor } = await import("./commandMonitor.ts");
  const cgroups = openCommandCgroups(options.log);
  return new CommandMonitor({
    identity: options.identity,
    workerUid: options.account.uid,
    pty: options.config.pty,
    approvals: options.config.approvals,
    ...(cgroups ? { cgroups } : {}),
    db: options.db,
    ...(options.configPath ? { configPath: options.configPath } : {}),
    ...(options.token ? { token: options.token } : {}),
    // The store holds approvals and grants: a command that could write it could approve itself.
    ownPaths: () => {
      const worker = options.workerPid();
      return [
        options.dataDir,
        ...(options.configPath ? [options.configPath] : []),
        process.execPath,
        `/proc/${process.pid}`,
        ...(worker ? [`/proc/${worker}`] : []),
      ];
    },
    reload: options.reload,
    gateProblems: () => {
      const credentials = options.identity.credentials;
      if (!credentials || !options.identity.user) return options.identity.problems;
      const own = { binary: process.execPath, dataDir: options.dataDir, ...(options.configPath ? { config: options.configPath } : {}) };
      return ownPathProblems(own, { uid: credentials.uid, gids: credentials.groups }, options.identity.user, localIdentityHost());
    },
    log: options.log,
  });
}
