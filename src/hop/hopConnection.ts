import type { Client } from "ssh2";
import type { Logger } from "../core/log/index.ts";
import { runInBackground } from "../core/process/index.ts";
import { VERSION } from "../core/version.ts";
import { installAgentd, type UploadReport } from "./agentdInstall.ts";
import { formatDestination, type Destination } from "./destination.ts";
import { FallbackClient } from "./fallbackClient.ts";
import { ForwardTunnel } from "./forwardTunnel.ts";
import type { HopsConfig } from "../core/config/sections/hopConfig.ts";
import { HopError } from "./hopErrors.ts";
import type { HopProgress } from "./hopProgress.ts";
import type { LocalBinary } from "./localBinary.ts";
import { retryUntilConnected } from "./reconnectLoop.ts";
import { HttpRemoteAgentdClient, type RemoteAgentdClient } from "./remoteAgentdClient.ts";
import { RemoteAgentdLink, type RemoteAgentdPlace } from "./remoteAgentdLink.ts";
import { runRemote } from "./remoteCommand.ts";
import { stopRemoteDaemon } from "./remoteDaemon.ts";
import { parseProbeOutput, probeScript, type RemoteFacts } from "./remoteProbe.ts";
import { resolveRemotePath } from "./shellQuote.ts";
import { connectChain, forwardOut, type SshChain } from "./sshChain.ts";
import { loadSsh2 } from "./ssh2Module.ts";
import { expandHome, planAuth } from "./sshAuth.ts";

export type HopState = "connecting" | "connected" | "reconnecting" | "fallback" | "closed";

export interface HopSpec {
  name: string;
  target: Destination;
  via: Destination[];
  identity?: string;
  acceptNew: boolean;
}

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
  private tunnel: ForwardTunnel | undefined;
  private readonly daemon: RemoteAgentdLink;
  private remoteClient: RemoteAgentdClient | undefined;
  private readonly stopping = new AbortController();

  constructor(
    readonly spec: HopSpec,
    private readonly deps: HopDeps,
  ) {
    this.openedAt = deps.openedAt ?? Date.now();
    this.daemon = new RemoteAgentdLink({
      hop: spec.name,
      readyTimeoutMs: deps.config.remote_ready_timeout_ms,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      log: deps.log,
    });
  }

  /** The remote agentd's version; none in fallback mode. */
  get remoteVersion(): string | null {
    return this.mode === "fallback" ? null : this.daemon.version;
  }

  get client(): RemoteAgentdClient | undefined {
    return this.remoteClient;
  }

  get tunnelUrl(): string | undefined {
    return this.tunnel?.port && this.state === "connected" ? `http://127.0.0.1:${this.tunnel.port}` : undefined;
  }

  /** Connects, probes, installs and starts the remote agentd (or falls back), then opens the tunnel. */
  async open(progress: (event: HopProgress) => void): Promise<void> {
    try {
      await this.establish(progress, this.spec.acceptNew);
    } catch (error) {
      this.lastError = (error as Error).message;
      this.chain?.end();
      await this.tunnel?.close();
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
    await this.tunnel?.close();
    this.chain?.end();
    this.chain = undefined;
    this.setState("closed");
    return stopped;
  }

  /** Connects once, finds the remote agentd's directory as a first connection does, and stops it. */
  private async stopOverNewConnection(): Promise<boolean> {
    const chain = await this.connect(false);
    try {
      const remoteDir = this.remoteDir ?? (await this.probeRemoteDir(chain.target));
      return await stopRemoteDaemon(chain.target, remoteDir, COMMAND_TIMEOUT_MS);
    } finally {
      chain.end();
    }
  }

  private async probeRemoteDir(ssh: Client): Promise<string> {
    const probe = await runRemote(ssh, probeScript(this.deps.config.remote_dir), COMMAND_TIMEOUT_MS);
    const facts = parseProbeOutput(probe.stdout);
    if (!facts.home)
      throw new HopError(
        "hop_remote_command_failed",
        `The remote probe did not report a home directory (exit ${probe.code}): ${probe.stderr.trim().slice(0, 300)}`,
      );
    this.facts = facts;
    return resolveRemotePath(this.deps.config.remote_dir, facts.home);
  }

  /** The SSH chain to the target, checked against known_hosts, with the hop's identity. */
  private async connect(acceptNew: boolean): Promise<SshChain> {
    const { config, log } = this.deps;
    const { utils } = await loadSsh2();
    return connectChain({
      chain: [...this.spec.via, this.spec.target],
      auth: (destination) =>
        planAuth(
          destination.user,
          {
            identity: this.spec.identity,
            identityFiles: config.identity_files,
            agentSocket: config.use_agent ? process.env.SSH_AUTH_SOCK : undefined,
          },
          utils.parseKey,
        ),
      knownHostsPath: expandHome(config.known_hosts),
      acceptNew,
      connectTimeoutMs: config.connect_timeout_ms,
      keepaliveIntervalMs: config.keepalive_interval_ms,
      keepaliveCountMax: config.keepalive_count_max,
      log,
    });
  }

  /** Connects the chain; probes and installs on the first success (mode unknown), else checks the remote agentd. */
  private async establish(progress: (event: HopProgress) => void, acceptNew: boolean): Promise<void> {
    const chainText = [...this.spec.via, this.spec.target].map(formatDestination).join(" → ");
    progress({ step: "connect", message: `connecting to ${chainText}` });
    const chain = await this.connect(acceptNew);
    this.chain = chain;
    const ssh = chain.target;

    if (this.mode === null) {
      progress({ step: "probe", message: "probing the remote host" });
      this.remoteDir = await this.probeRemoteDir(ssh);
      await this.installAndStart(ssh, this.facts!, progress);
    } else if (this.mode === "agentd") {
      await this.restartIfGone(ssh);
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
    progress({
      step: "ready",
      message:
        this.mode === "agentd"
          ? `hop ${this.spec.name} is up (agentd ${this.remoteVersion})`
          : `hop ${this.spec.name} is up in fallback mode: ${this.fallbackReason}`,
    });
  }

  private async installAndStart(ssh: Client, facts: RemoteFacts, progress: (event: HopProgress) => void): Promise<void> {
    const install = await installAgentd({
      hop: this.spec.name,
      ssh,
      binary: await this.deps.binary(),
      facts,
      remoteDir: this.remoteDir!,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      log: this.deps.log,
      progress,
      onUpload: (report) => (this.upload = report),
    });
    if (install.kind === "fallback") return this.fallBack(install.reason, progress);
    progress({ step: "start", message: "starting the remote agentd" });
    try {
      await this.daemon.start(ssh, this.place(), install.uploaded);
    } catch (error) {
      if (error instanceof HopError && error.code === "hop_remote_start_failed") return this.fallBack(error.message, progress);
      throw error;
    }
    progress({ step: "tunnel", message: "opening the tunnel" });
    this.mode = "agentd";
    const tunnel = new ForwardTunnel(() => {
      const live = this.liveSsh();
      return live && this.daemon.port ? forwardOut(live, "127.0.0.1", this.daemon.port) : Promise.reject(this.unavailable());
    });
    await tunnel.listen();
    this.tunnel = tunnel;
    this.remoteClient = new HttpRemoteAgentdClient(this.spec.name, {
      baseUrl: () => this.tunnelUrl,
      token: () => this.daemon.token,
      unavailable: () => this.unavailable(),
      callTimeoutMarginMs: this.deps.config.call_timeout_margin_ms,
    });
    await this.daemon.checkThroughTunnel(ssh, this.place(), tunnel);
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

  /** After a reconnect: the remote agentd normally still runs; start it again if the host rebooted. */
  private async restartIfGone(ssh: Client): Promise<void> {
    const before = this.daemon.port;
    await this.daemon.start(ssh, this.place(), false);
    await this.daemon.checkThroughTunnel(ssh, this.place(), this.tunnel!);
    if (this.daemon.port !== before)
      this.deps.log.warn("hop.remote_restarted", {
        hop: this.spec.name,
        note: "the remote agentd is a new process; its earlier sessions are gone",
        version: VERSION,
      });
  }

  private async onDrop(chain: SshChain): Promise<void> {
    if (this.chain !== chain || this.stopping.signal.aborted) return;
    const { config, log } = this.deps;
    this.chain = undefined;
    this.tunnel?.dropConnections();
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
      await this.tunnel?.close();
    } else if (outcome.kind === "gave_up") {
      await this.tunnel?.close();
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
    if (this.state === "reconnecting") {
      return new HopError(
        "hop_disconnected",
        `Hop ${this.spec.name} lost its connection and is reconnecting${this.lastError ? ` (last attempt: ${this.lastError})` : ""}; try again shortly`,
      );
    }
    if (this.state === "closed")
      return new HopError("hop_closed", `Hop ${this.spec.name} is closed${this.lastError ? `: ${this.lastError}` : ""}`);
    return new HopError("hop_disconnected", `Hop ${this.spec.name} is not connected yet`);
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
            await this.tunnel?.close();
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
