import type { Database } from "bun:sqlite";
import type { Logger } from "../core/log/index.ts";
import { runInBackground } from "../core/process/index.ts";
import { CheckScheduler } from "./checks/checkScheduler.ts";
import { LogFileTailer } from "./checks/logFileTailer.ts";
import { HttpProxyAdmin } from "./actions/proxyAdmin.ts";
import type { Signal } from "./checks/signal.ts";
import { Watchdog } from "./watchdog.ts";
import type { WatchdogConfig } from "../core/config/sections/watchdogConfig.ts";
import { WorkerProbe } from "./checks/workerProbe.ts";
import type { WatchdogCounters } from "./watchdogCounters.ts";
import { hostname } from "node:os";
import type { AlertsConfig } from "../core/config/sections/alertsConfig.ts";
import { AlertmanagerSink } from "./actions/alertmanagerSink.ts";
import type { Tracer } from "../telemetry/index.ts";
import type { ServedModels } from "./actions/providerAlternatives.ts";

export interface WatchdogRuntimeOptions {
  config: WatchdogConfig;
  db: Database;
  log: Logger;
  /** Bearer token for the worker's routes when it is bound beyond loopback. */
  token?: string;
  secrets?: Iterable<string | undefined>;
  workerPid: () => number | undefined;
  restartWorker: (reason: string, pid?: number) => Promise<string>;
  /** The configured providers (name, models, aliases): whether a switch has somewhere to fail over to. */
  providers?: readonly ServedModels[];
  /** Alertmanager targets for incidents; none by default. */
  alerts?: AlertsConfig;
  tracer?: Tracer;
  /** Hands the engine's counters to the worker, which serves /metrics (over their IPC channel). */
  publish?: (counters: WatchdogCounters) => void;
}

/**
 * The watchdog as the supervisor runs it: the decision engine plus its timers — worker probes,
 * configured checks, tailed log files and the tick that verifies actions and resolves incidents.
 * Everything is timer driven, so an idle supervisor costs next to nothing.
 */
export class WatchdogRuntime {
  readonly watchdog: Watchdog;
  readonly probe: WorkerProbe;
  readonly checks: CheckScheduler;
  readonly #tailers: LogFileTailer[];
  readonly #alertmanager: AlertmanagerSink | undefined;
  #workerUrl: string | undefined;
  #tick: ReturnType<typeof setInterval> | undefined;
  #publishedCounters = "";

  constructor(private readonly options: WatchdogRuntimeOptions) {
    const { config, db, log } = options;
    const report = (signal: Signal) => void this.report(signal);
    this.probe = new WorkerProbe(config.probe, report);
    const secrets = [...(options.secrets ?? [])];
    this.checks = new CheckScheduler(
      config.checks,
      config.flapping,
      { workerPid: options.workerPid, secrets },
      report,
      db,
      Date.now,
      (signal) => void this.watchdog.recur(signal),
    );
    this.watchdog = new Watchdog({
      config,
      db,
      log,
      worker: { restartWorker: options.restartWorker },
      proxy: new HttpProxyAdmin(() => this.#workerUrl, options.token),
      health: () => ({ ok: this.probe.healthy, detail: { ...this.probe.detail(), worker_pid: options.workerPid() ?? null } }),
      checkFailing: (name) => this.checks.failing(name),
      checkPassedSince: (name, since) => this.checks.passedSince(name, since),
      secrets,
      tracer: options.tracer,
      ...(options.providers ? { providers: options.providers } : {}),
    });
    this.#alertmanager = options.alerts?.alertmanager.length
      ? new AlertmanagerSink({
          config: options.alerts,
          store: this.watchdog.store,
          silences: this.watchdog.silences,
          log: log.child("alertmanager"),
          host: hostname(),
          statusUrl: () => this.#workerUrl,
        })
      : undefined;
    this.#tailers = config.log_files.map((file) => new LogFileTailer(file.path, (line) => void this.watchdog.ingestLine(line, file.path)));
  }

  get enabled(): boolean {
    return this.options.config.enabled;
  }

  start(): void {
    const adopted = this.watchdog.adoptUnresolved();
    if (adopted > 0) this.options.log.info("watchdog.adopted", { unresolved_incidents: adopted });
    if (!this.enabled) return;
    this.checks.start();
    for (const [i, file] of this.options.config.log_files.entries()) this.#tailers[i]!.start(file.poll_ms);
    this.#tick = setInterval(() => {
      runInBackground("watchdog.tick", () => this.watchdog.tick(), {}, this.options.log);
      this.#alertmanager?.sync(Date.now());
      this.#publishCounters();
    }, this.options.config.tick_ms);
  }

  /** The engine's counters, for the worker's /metrics: sent when they changed. */
  #publishCounters(): void {
    const counters: WatchdogCounters = {
      ...this.watchdog.counters(),
      check_seconds: this.checks.durations(),
      ...(this.#alertmanager
        ? { alertmanager_sent_total: this.#alertmanager.sent, alertmanager_failed_total: this.#alertmanager.failed }
        : {}),
    };
    const text = JSON.stringify(counters);
    if (text === this.#publishedCounters) return;
    this.options.publish?.(counters);
    this.#publishedCounters = text;
  }

  async stop(): Promise<void> {
    clearInterval(this.#tick);
    this.probe.detach();
    this.checks.stop();
    for (const tailer of this.#tailers) tailer.stop();
    await this.watchdog.idle();
    // Resolutions decided while stopping still reach Alertmanager (each post is bounded by its timeout).
    await Promise.all(this.#alertmanager?.pending() ?? []);
    this.#alertmanager?.sync(Date.now());
    await Promise.all(this.#alertmanager?.pending() ?? []);
    this.#publishCounters();
  }

  workerListening(url: string, pid: number): void {
    this.#workerUrl = url;
    // A new worker starts with no counters: it gets the current ones at once, not at the next change.
    this.#publishedCounters = "";
    this.#publishCounters();
    if (this.enabled) this.probe.attach({ url, pid, token: this.options.token });
  }

  workerGone(): void {
    this.#workerUrl = undefined;
    this.probe.detach();
  }

  /** A read of the worker's stdout: whole lines, each ended by LF. */
  ingestBlock(block: string): void {
    if (!this.enabled) return;
    const reported = this.watchdog.ingestBlock(block);
    if (reported !== undefined) runInBackground("watchdog.ingest", () => reported, {}, this.options.log);
  }

  /** Worker exits and crash loops are recorded even with the watchdog's own monitoring turned off. */
  report(signal: Signal): Promise<void> {
    return this.watchdog.report(signal);
  }
}
