import { loadConfig, type AgentdConfig } from "../core/config/index.ts";
import { AgentdError } from "../core/errors/index.ts";
import type { Logger } from "../core/log/index.ts";
import type { ReloadReport } from "../core/configChange.ts";

/** The running worker: each capability applies what it can and names what needs a restart. */
export interface ReloadTarget {
  reloadConfig(config: AgentdConfig): ReloadReport;
}

const RESTART_NOTE = "config changed, needs a restart to apply:";

/**
 * The worker's side of a config reload (SIGHUP, forwarded by the supervisor): re-reads the file and
 * applies what can change without a restart, so no connection, terminal or turn is dropped. An
 * invalid file keeps the running config; the problem stays in `notes` (shown by /health and the
 * page) until a later reload succeeds. A changed key only a restart applies stays in `notes` too,
 * until agentd restarts.
 */
export type ReloadOutcome = { result: "reloaded"; applied: string[]; needs_restart: string[] } | { result: "failed"; problem: string };

export class WorkerConfigReload {
  #reloads = 0;
  /** Keys changed since start that only a restart applies: the note /health shows until then. */
  readonly #pendingRestart = new Set<string>();
  #waiters: Array<(outcome: ReloadOutcome) => void> = [];

  constructor(
    private readonly options: {
      configPath?: string;
      /** Reads the config file's text; default: the worker reads it itself. */
      readText?: () => Promise<string | undefined>;
      /** The live notes array /health and the page read: replaced in place. */
      notes: string[];
      target: ReloadTarget;
      logger: Logger;
    },
  ) {}

  /** Resolves with the outcome of the next reload (the one a request to the supervisor causes). */
  next(): Promise<ReloadOutcome> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  async reload(): Promise<ReloadOutcome> {
    const outcome = await this.#apply();
    for (const resolve of this.#waiters.splice(0)) resolve(outcome);
    return outcome;
  }

  async #apply(): Promise<ReloadOutcome> {
    const { notes, logger, readText } = this.options;
    this.#reloads++;
    try {
      const text = readText ? await readText() : undefined;
      const loaded = loadConfig({ explicitPath: this.options.configPath, ...(text === undefined ? {} : { text }) });
      const report = this.options.target.reloadConfig(loaded.config);
      for (const key of report.applied) this.#pendingRestart.delete(key);
      for (const key of report.needsRestart) this.#pendingRestart.add(key);
      const pending = [...this.#pendingRestart].sort();
      notes.splice(0, notes.length, ...loaded.notes, ...(pending.length ? [`${RESTART_NOTE} ${pending.join(", ")}`] : []));
      logger.info("config.reloaded", {
        file: loaded.path ?? null,
        providers: loaded.config.providers.length,
        reloads: this.#reloads,
        applied: report.applied,
        needs_restart: report.needsRestart,
      });
      return { result: "reloaded", applied: report.applied, needs_restart: report.needsRestart };
    } catch (error) {
      // A bad file (ConfigError) or a monitor that could not read it: the old config stays.
      if (!(error instanceof AgentdError)) throw error;
      const problem = error.message;
      const note = `config reload failed: ${problem}; the previous config stays in force`;
      notes.splice(0, notes.length, ...notes.filter((n) => !n.startsWith("config reload failed:")), note);
      logger.error("config.reload_failed", { problem });
      return { result: "failed", problem };
    }
  }
}
