// Over 300 lines by a few: one hop's connection lifecycle (connect, reconnect, close) kept together on purpose.
import type { Client } from "ssh2";
import type { Logger } from "../core/log/index.ts";
import { runInBackground } from "../core/process/index.ts";
import type { UploadReport } from "./agentdInstall.ts";
import { FallbackClient } from "./fallbackClient.ts";
import type { HopsConfig } from "../core/config/sections/hopConfig.ts";
import { HopError } from "./hopErrors.ts";
import { connectingMessage, type HopProgress, readyMessage } from "./hopProgress.ts";
import type { HopSpec, HopState } from "./hopSpec.ts";
import { connectHopChain } from "./hopSshChain.ts";
import { hopUnavailable } from "./hopUnavailable.ts";
import type { LocalBinary } from "./localBinary.ts";
import { retryUntilConnected } from "./reconnectLoop.ts";
import type { RemoteAgentdClient } from "./remoteAgentdClient.ts";
import type { RemoteAgentdPlace } from "./remoteAgentdLink.ts";
import { stopRemoteDaemon } from "./remoteDaemon.ts";
import { probeRemoteDir } from "./remoteDirProbe.ts";
import type { RemoteFacts } from "./remoteProbe.ts";
import type { SshChain } from "./sshChain.ts";
import { TunnelledAgentd } from "./tunnelledAgentd.ts";

export interface HopDeps {
  config: HopsConfig;
  binary(): Promise<LocalBinary>;
  log: Logger;
  onChange(hop: HopConnection): void;
  /** When the hop was first opened; a hop resumed after a worker restart keeps its original time. */
  openedAt?: number;
}

const COMMAND_TIMEOUT_MS = 60_000;

/**
 * One hop: its SSH chain, the remote agentd (or the SSH fallback), the local tunnel to it, and
 * the reconnect loop that keeps it up. Remote PTY sessions survive a reconnect because they live
 * in the remote agentd.
 */
export class HopConnection {
  state: HopState = "connecting";
  mode: "agentd" | "fallback" | null = null;
  facts: RemoteFacts | undefined;
  remoteDir: string | undefined;
  fallbackReason: string | undefined;
  lastError: string | undefined;
  upload: UploadReport | undefined;
  readonly openedAt: number;
  lastChange = Date.now();
  private chain: SshChain | undefined;
  private readonly agentd: TunnelledAgentd;
  private remoteClient: RemoteAgentdClient | undefined;
  private readonly stopping = new AbortController();

  constructor(
    readonly spec: HopSpec,
    private readonly deps: HopDeps,
  ) {
    this.openedAt = deps.openedAt ?? Date.now();
    this.agentd = new TunnelledAgentd({
      hop: spec.name,
      config: deps.config,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      log: deps.log,
      liveSsh: () => this.liveSsh(),
      baseUrl: () => this.tunnelUrl,
      unavailable: () => this.unavailable(),
    });
  }

  /** The remote agentd's version; none in fallback mode. */
  get remoteVersion(): string | null {
    return this.mode === "fallback" ? null : this.agentd.version;
  }

  get client(): RemoteAgentdClient | undefined {
    return this.remoteClient;
  }

  get tunnelUrl(): string | undefined {
    const port = this.agentd.tunnelPort;
    return port && this.state === "connected" ? `http://127.0.0.1:${port}` : undefined;
  }

  /** Connects, probes, installs and starts the remote agentd (or falls back), then opens the tunnel. */
  async open(progress: (event: HopProgress) => void): Promise<void> {
    try {
      await this.establish(progress, this.spec.acceptNew);
    } catch (error) {
      this.lastError = (error as Error).message;
      this.chain?.end();
      await this.agentd.closeTunnel();
      this.setState("closed");
      throw error;
    }
  }

  /**
   * Brings back a hop a previous worker had open: shows `reconnecting` at once, then connects in
   * the background with the same backoff and give-up as after a dropped connection, counted from
   * `since`. The remote agentd is normally still running, so nothing is uploaded or restarted.
   */
  resume(since: number): void {
    this.setState("reconnecting");
    this.inBackground("hop.resume_failed", () => this.reconnect(since + this.deps.config.reconnect_give_up_s * 1000));
  }

  /**
   * Ends the tunnel and the SSH chain; with `stopRemote`, stops the remote agentd first. `ranAgentd`
   * says an agentd was started there by an earlier connection (a hop that failed to come back after
   * a restart, or one known only from the store): it is then stopped over a connection of its own,
   * so it is not left running with no hop to reach it.
   */
  async close(stopRemote: boolean, ranAgentd = false): Promise<boolean> {
    this.stopping.abort();
    let stopped = false;
    const ssh = this.state === "connected" ? this.chain?.target : undefined;
    const stop = (run: () => Promise<boolean>) =>
      run().catch((error: unknown) => {
        this.deps.log.warn("hop.stop_remote_failed", { hop: this.spec.name, error });
        return false;
      });
    if (stopRemote && ssh && this.mode === "agentd" && this.remoteDir) {
      stopped = await stop(() => stopRemoteDaemon(ssh, this.remoteDir!, COMMAND_TIMEOUT_MS));
    } else if (stopRemote && (this.mode === "agentd" || (this.mode === null && ranAgentd))) {
      this.dropChain();
      stopped = await stop(() => this.stopOverNewConnection());
    }
    if (this.remoteClient instanceof FallbackClient) this.remoteClient.dropAllSessions();
    await this.agentd.closeTunnel();
    this.dropChain();
    this.setState("closed");
    return stopped;
  }

  /** Connects once, finds the remote agentd's directory as a first connection does, and stops it. */
  private async stopOverNewConnection(): Promise<boolean> {
    const chain = await connectHopChain(this.spec, this.deps.config, this.deps.log, false);
    try {
      const remoteDir = this.remoteDir ?? (await this.probeRemoteDir(chain.target));
      return await stopRemoteDaemon(chain.target, remoteDir, COMMAND_TIMEOUT_MS);
    } finally {
      chain.end();
    }
  }

  /** Probes the host; keeps what it learnt and gives the remote agentd's directory. */
  private async probeRemoteDir(ssh: Client): Promise<string> {
    const { facts, remoteDir } = await probeRemoteDir(ssh, this.deps.config.remote_dir, COMMAND_TIMEOUT_MS);
    this.facts = facts;
    return remoteDir;
  }

  /** Connects the chain; probes and installs on the first success (mode unknown), else checks the remote agentd. */
  private async establish(progress: (event: HopProgress) => void, acceptNew: boolean): Promise<void> {
    progress({ step: "connect", message: connectingMessage([...this.spec.via, this.spec.target]) });
    const chain = await connectHopChain(this.spec, this.deps.config, this.deps.log, acceptNew);
    this.chain = chain;
    const ssh = chain.target;

    if (this.mode === null) {
      progress({ step: "probe", message: "probing the remote host" });
      this.remoteDir = await this.probeRemoteDir(ssh);
      await this.installAndStart(ssh, this.facts!, progress);
    } else if (this.mode === "agentd") {
      await this.agentd.restartIfGone(ssh, this.place());
    }
    if (this.mode === "fallback" && !(this.remoteClient instanceof FallbackClient)) {
      this.remoteClient = new FallbackClient(this.spec.name, {
        ssh: () => this.liveSsh(),
        unavailable: () => this.unavailable(),
        home: this.facts!.home,
      });
    }
    this.setState(this.mode === "agentd" ? "connected" : "fallback");
    this.lastError = undefined;
    this.inBackground("hop.reconnect_loop_failed", async () => {
      await chain.closed;
      await this.onDrop(chain);
    });
    progress({ step: "ready", message: readyMessage(this.spec.name, this.mode, this.remoteVersion, this.fallbackReason) });
  }

  private async installAndStart(ssh: Client, facts: RemoteFacts, progress: (event: HopProgress) => void): Promise<void> {
    const binary = await this.deps.binary();
    const onUpload = (report: UploadReport) => (this.upload = report);
    const fallback = await this.agentd.installAndStart(
      { ssh, binary, facts, remoteDir: this.remoteDir!, progress, onUpload },
      this.place(),
    );
    if (fallback) return this.fallBack(fallback.reason, progress);
    progress({ step: "tunnel", message: "opening the tunnel" });
    this.mode = "agentd";
    this.remoteClient = await this.agentd.openTunnel();
    await this.agentd.check(ssh, this.place());
  }

  private place(): RemoteAgentdPlace {
    return { dataDir: this.remoteDir!, setsid: this.facts?.setsid ?? true };
  }

  private fallBack(reason: string, progress: (event: HopProgress) => void): void {
    this.mode = "fallback";
    this.fallbackReason = reason;
    this.deps.log.warn("hop.fallback", { hop: this.spec.name, reason });
    progress({ step: "start", message: `fallback: ${reason}; commands will run over SSH exec with a pty` });
  }

  private async onDrop(chain: SshChain): Promise<void> {
    if (this.chain !== chain || this.stopping.signal.aborted) return;
    const { config, log } = this.deps;
    this.chain = undefined;
    this.agentd.dropConnections();
    if (this.remoteClient instanceof FallbackClient) this.remoteClient.dropAllSessions();
    this.setState("reconnecting");
    // `host` names the incident's component (hop:{host}): the hop's name, which `agentd hops` shows.
    log.warn("hop.disconnected", { hop: this.spec.name, host: this.spec.name });
    await this.reconnect(Date.now() + config.reconnect_give_up_s * 1000);
  }

  /** Retries with backoff until connected, closed, refused by a host key, or past `giveUpAt`. */
  private async reconnect(giveUpAt: number): Promise<void> {
    const { config, log } = this.deps;
    const outcome = await retryUntilConnected({
      signal: this.stopping.signal,
      giveUpAt,
      initialMs: config.reconnect_initial_ms,
      maxMs: config.reconnect_max_ms,
      attempt: () =>
        this.establish(() => undefined, false).catch((error: unknown) => {
          this.dropChain();
          throw error;
        }),
      onFailure: (error, attempt, nextMs) => {
        this.lastError = (error as Error).message;
        this.setState("reconnecting");
        log.warn("hop.reconnect_failed", { hop: this.spec.name, host: this.spec.name, attempt, error, next_ms: nextMs });
      },
      isFinal: (error) => error instanceof HopError && (error.code === "hop_host_key_changed" || error.code === "hop_host_unknown"),
    });
    if (outcome.kind === "connected") {
      log.info("hop.reconnected", { hop: this.spec.name, attempt: outcome.attempt });
    } else if (outcome.kind === "connected_after_stop") {
      // Closed while this attempt was connecting: drop what it built.
      this.dropChain();
      await this.agentd.closeTunnel();
    } else if (outcome.kind === "gave_up") {
      await this.agentd.closeTunnel();
      this.setState("closed");
    }
  }

  private dropChain(): void {
    this.chain?.end();
    this.chain = undefined;
  }

  /** The chain is cleared when it drops, so a set chain is live (or being re-established: a resume checks the tunnel through it). */
  private liveSsh(): Client | undefined {
    return this.state === "closed" ? undefined : this.chain?.target;
  }

  private unavailable(): HopError {
    return hopUnavailable(this.spec.name, this.state, this.lastError);
  }

  private setState(state: HopState): void {
    // Once closed, a connect attempt still in flight must not show the hop as up again.
    if (this.state === state || (this.stopping.signal.aborted && state !== "closed")) return;
    this.state = state;
    this.lastChange = Date.now();
    try {
      this.deps.onChange(this);
    } catch (error) {
      // Recording the state (a store write) failing must not stop a reconnect midway.
      this.deps.log.error("hop.state_save_failed", { hop: this.spec.name, state, error });
    }
  }

  /**
   * Work nobody awaits (the wait for a drop, the reconnect loop after it or after a resume), through
   * the one background helper: a failure is logged (`background.failed`, task = `event`), counted,
   * and ends the hop.
   */
  private inBackground(event: string, work: () => Promise<void>): void {
    runInBackground(
      event,
      () =>
        work().catch(async (error: unknown) => {
          this.lastError = (error as Error).message;
          this.dropChain();
          this.setState("closed");
          try {
            await this.agentd.closeTunnel();
          } catch (closeError) {
            this.deps.log.warn("hop.tunnel_close_failed", { hop: this.spec.name, error: closeError });
          }
          throw error;
        }),
      { hop: this.spec.name },
      this.deps.log,
    );
  }
}
