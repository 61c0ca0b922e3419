import { join } from "node:path";
import type { AgentdConfig } from "../core/config/schema.ts";
import { createLogger, RotatingFile, setLogSink } from "../core/log/index.ts";
import { type CommandIdentity, type Hardening, installProcessErrorHandlers, type WorkerAccount } from "../core/process/index.ts";
import { type Database, openStore, StoreCorruptError } from "../core/store/index.ts";
import { ensureApiToken, isLoopbackAddress, UntrustedTokenError } from "../http/token.ts";
import { allMigrations } from "./allMigrations.ts";
import { restrictDataDir } from "./dataDirAccess.ts";
import { tokenRequired, type ServeOptions } from "./serveOptions.ts";
import { SupervisorLogOutput } from "./supervisorLogOutput.ts";
import { reclaimDataDir, unlinkedStoreFiles } from "./workerSplit.ts";

const log = createLogger("supervisor");

/** Who the supervisor's commands and worker run as, decided before its state is opened. */
export interface Privileges {
  identity: CommandIdentity;
  split: WorkerAccount | { problem: string };
  configPath?: string;
}

/** What the supervisor holds before its first worker starts. */
export interface SupervisorState {
  db: Database;
  /** Whole JSON lines as bytes, each ended by LF, for stdout and the log file. */
  writeBlock: (block: Uint8Array) => void;
  /** The service user the worker runs as, when agentd split itself. */
  account?: WorkerAccount;
  /** Required of API callers (the watchdog's probes send it). */
  token?: string;
  /** The token a privileged terminal's request must carry, checked by the monitor itself. */
  monitorToken?: string;
}

/**
 * The data dir made safe for the worker it will run (shared with a service user, or taken back from
 * one), the log file as the log sink, the store created and checked, the tokens. `exitCode` when
 * agentd must not start, after saying why on stderr.
 */
export async function openSupervisorState(
  options: ServeOptions,
  config: AgentdConfig,
  dataDir: string,
  hardening: Hardening,
  privileges: Privileges,
): Promise<SupervisorState | { exitCode: number }> {
  const account = "problem" in privileges.split ? undefined : privileges.split;
  // An earlier start shared the data dir with its worker user; this one runs a root worker.
  const reclaimed = account ? false : reclaimDataDir(dataDir);
  const restrictProblem = restrictDataDir(dataDir, account?.gid);
  const linked = account || reclaimed ? unlinkedStoreFiles(dataDir) : { removed: [] };
  if (linked.refused) {
    process.stderr.write(`agentd: ${linked.refused}\n`);
    return { exitCode: 2 };
  }
  const logPath = join(dataDir, "logs", "agentd.log");
  const logFile = new RotatingFile({ path: logPath, maxBytes: config.log.file_max_bytes, keep: config.log.file_keep });
  const logOutput = new SupervisorLogOutput(logFile, logPath, options.logFormat ?? "json");
  process.on("exit", logOutput.flush);
  setLogSink(logOutput.write);
  installProcessErrorHandlers(log);
  if (restrictProblem) log.warn("data_dir.permissions", { data_dir: dataDir, problem: restrictProblem });
  if (reclaimed)
    log.warn("data_dir.reclaimed", {
      data_dir: dataDir,
      reason: "the worker runs as root this time: the data dir is closed again and a new token made",
    });
  if (linked.removed.length > 0) log.warn("security.links_removed", { paths: linked.removed });
  if (hardening.problem) log.warn("process.dumpable", { problem: hardening.problem });
  // Created, checked and migrated before the worker starts: the worker then opens a ready store.
  let db: Database;
  try {
    db = openStore({ path: join(dataDir, "agentd.db"), migrations: allMigrations, quickCheck: true });
  } catch (error) {
    if (!(error instanceof StoreCorruptError)) throw error;
    log.error("store.corrupt", { path: error.path, problem: error.message });
    process.stderr.write(`agentd: ${error.message}\n`);
    return { exitCode: 2 };
  }
  if ("problem" in privileges.split && privileges.identity.mode === "command_user")
    log.warn("security.worker_as_root", { problem: privileges.split.problem });
  const bind = options.bind ?? config.server.bind;
  try {
    const token = (await tokenRequired(bind, options.requireToken ?? config.server.require_token))
      ? announceToken(bind, dataDir, account)
      : undefined;
    // A privileged terminal needs a request that carried it: the monitor checks that itself.
    const monitorToken = account ? ensureApiToken(dataDir, account).token : undefined;
    return {
      db,
      writeBlock: logOutput.writeBlock,
      ...(account ? { account } : {}),
      ...(token ? { token } : {}),
      ...(monitorToken ? { monitorToken } : {}),
    };
  } catch (error) {
    if (!(error instanceof UntrustedTokenError)) throw error;
    log.error("auth.token_untrusted", { problem: error.message });
    process.stderr.write(`agentd: ${error.message}\n`);
    db.close();
    return { exitCode: 2 };
  }
}

/** Creates the token at first start and says where it is; returns it for the watchdog's probes. */
function announceToken(bind: string, dataDir: string, account: WorkerAccount | undefined): string {
  const token = ensureApiToken(dataDir, account);
  // Printed once, to the terminal only: the log file must never hold the secret. A loopback bind
  // that requires it (a hop's remote agentd) never prints it: its reader takes it from the file.
  if (token.created && !isLoopbackAddress(bind))
    process.stderr.write(`agentd: bound to ${bind}; API token created in ${token.path}:\n  ${token.token}\n`);
  log.info("auth.token", { path: token.path, created: token.created });
  return token.token;
}
