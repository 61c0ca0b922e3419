import type { Client } from "ssh2";
import type { Logger } from "../log/index.ts";
import { binaryRunsCheck, type LocalBinary } from "./localBinary.ts";
import { uploadBinary } from "./binaryUpload.ts";
import { formatDestination, type Destination } from "./destination.ts";
import { FallbackClient } from "./fallbackClient.ts";
import { ForwardTunnel } from "./forwardTunnel.ts";
import type { HopsConfig } from "./hopConfig.ts";
import { HopError } from "./hopErrors.ts";
import { platformMismatch } from "./platformMatch.ts";
import { HttpRemoteAgentdClient, type RemoteAgentdClient } from "./remoteAgentdClient.ts";
import { runRemote } from "./remoteCommand.ts";
import { probeRemoteAuth } from "./remoteAuth.ts";
import { ensureRemoteDaemon, stopRemoteDaemon } from "./remoteDaemon.ts";
import { parseProbeOutput, probeScript, type RemoteFacts } from "./remoteProbe.ts";
import { resolveRemotePath } from "./shellQuote.ts";
import { connectChain, forwardOut, type SshChain } from "./sshChain.ts";
import { expandHome, planAuth } from "./sshAuth.ts";

export type HopState = "connecting" | "connected" | "reconnecting" | "fallback" | "closed";

export interface HopSpec {
  name: string;
  target: Destination;
  via: Destination[];
  identity?: string;
  acceptNew: boolean;
}

export type HopStep = "connect" | "probe" | "upload" | "start" | "tunnel" | "ready";

export interface HopProgress {
  step: HopStep;
  message: string;
  bytes?: number;
  total?: number;
  elapsed_ms?: number;
}

export interface UploadReport {
  uploaded: boolean;
  binary_bytes: number;
  wire_bytes: number;
  compressed: boolean;
  verified?: "sha256" | "size";
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
  remoteVersion: string | null = null;
  remoteDir: string | undefined;
  fallbackReason: string | undefined;
  lastError: string | undefined;
  upload: UploadReport | undefined;
  readonly openedAt: number;
  lastChange = Date.now();
  private chain: SshChain | undefined;
  private tunnel: ForwardTunnel | undefined;
  private remotePort: number | undefined;
  /** The remote agentd's bearer token: in memory only, never in the store, a log line or an error. */
  private remoteToken: string | undefined;
  private remoteClient: RemoteAgentdClient | undefined;
  private readonly stopping = new AbortController();

  constructor(readonly spec: HopSpec, private readonly deps: HopDeps) {
    this.openedAt = deps.openedAt ?? Date.now();
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
    void this.reconnect(since + this.deps.config.reconnect_give_up_s * 1000);
  }

  /** Ends the tunnel and the SSH chain; with `stopRemote`, stops the remote agentd first. */
  async close(stopRemote: boolean): Promise<boolean> {
    this.stopping.abort();
    let stopped = false;
    const ssh = this.chain?.target;
    if (stopRemote && ssh && this.mode === "agentd" && this.remoteDir && this.state !== "reconnecting") {
      stopped = await stopRemoteDaemon(ssh, this.remoteDir, COMMAND_TIMEOUT_MS).catch((error: unknown) => {
        this.deps.log.warn("hop.stop_remote_failed", { hop: this.spec.name, error });
        return false;
      });
    }
    if (this.remoteClient instanceof FallbackClient) this.remoteClient.dropAllSessions();
    await this.tunnel?.close();
    this.chain?.end();
    this.chain = undefined;
    this.setState("closed");
    return stopped;
  }

  /** Connects the chain; probes and installs on the first success (mode unknown), else checks the remote agentd. */
  private async establish(progress: (event: HopProgress) => void, acceptNew: boolean): Promise<void> {
    const { config, log } = this.deps;
    const chainText = [...this.spec.via, this.spec.target].map(formatDestination).join(" → ");
    progress({ step: "connect", message: `connecting to ${chainText}` });
    const chain = await connectChain({
      chain: [...this.spec.via, this.spec.target],
      auth: (destination) => planAuth(destination.user, {
        identity: this.spec.identity,
        identityFiles: config.identity_files,
        agentSocket: config.use_agent ? process.env.SSH_AUTH_SOCK : undefined,
      }),
      knownHostsPath: expandHome(config.known_hosts),
      acceptNew,
      connectTimeoutMs: config.connect_timeout_ms,
      keepaliveIntervalMs: config.keepalive_interval_ms,
      keepaliveCountMax: config.keepalive_count_max,
      log,
    });
    this.chain = chain;
    const ssh = chain.target;

    if (this.mode === null) {
      progress({ step: "probe", message: "probing the remote host" });
      const probe = await runRemote(ssh, probeScript(config.remote_dir), COMMAND_TIMEOUT_MS);
      const facts = parseProbeOutput(probe.stdout);
      if (!facts.home) throw new HopError("hop_remote_command_failed", `The remote probe did not report a home directory (exit ${probe.code}): ${probe.stderr.trim().slice(0, 300)}`);
      this.facts = facts;
      this.remoteDir = resolveRemotePath(config.remote_dir, facts.home);
      await this.installAndStart(ssh, facts, progress);
    } else if (this.mode === "agentd") {
      await this.restartIfGone(ssh);
    }
    if (this.mode === "fallback" && !(this.remoteClient instanceof FallbackClient)) {
      this.remoteClient = new FallbackClient(this.spec.name, { ssh: () => this.liveSsh(), unavailable: () => this.unavailable(), home: this.facts!.home });
    }
    this.setState(this.mode === "agentd" ? "connected" : "fallback");
    this.lastError = undefined;
    void chain.closed.then(() => this.onDrop(chain));
    progress({ step: "ready", message: this.mode === "agentd" ? `hop ${this.spec.name} is up (agentd ${this.remoteVersion})` : `hop ${this.spec.name} is up in fallback mode: ${this.fallbackReason}` });
  }

  private async installAndStart(ssh: Client, facts: RemoteFacts, progress: (event: HopProgress) => void): Promise<void> {
    const { config, log } = this.deps;
    const binary = await this.deps.binary();
    const mismatch = platformMismatch(binary.platform, facts);
    if (mismatch) return this.fallBack(mismatch, progress);
    const binPath = `${this.remoteDir}/bin/agentd`;
    const same = facts.installed?.sha256 === binary.sha256;
    this.upload = { uploaded: false, binary_bytes: binary.bytes.length, wire_bytes: 0, compressed: false };
    if (same && !facts.installed!.runs) return this.fallBack(`the installed agentd (same sha256) does not run there: \`${binPath} version\` failed`, progress);
    if (!same) {
      if (facts.freeKb !== null && facts.freeKb * 1024 < binary.bytes.length * 2.5) {
        throw new HopError("hop_upload_failed", `Not enough free disk on the remote host: ${facts.freeKb} KiB free, the upload needs about ${Math.ceil((binary.bytes.length * 2.5) / 1024)} KiB`);
      }
      const started = Date.now();
      progress({ step: "upload", message: `uploading agentd (${binary.bytes.length} bytes${facts.gzip ? ", gzip on the wire" : ""}) to ${binPath}` });
      const result = await uploadBinary({
        client: ssh,
        binary: binary.bytes,
        sha256: binary.sha256,
        binPath,
        gzip: facts.gzip,
        shaTool: facts.shaTool,
        commandTimeoutMs: COMMAND_TIMEOUT_MS,
        onProgress: (bytes, total) => progress({ step: "upload", message: "uploading", bytes, total, elapsed_ms: Date.now() - started }),
      });
      this.upload = { uploaded: true, binary_bytes: binary.bytes.length, wire_bytes: result.wireBytes, compressed: result.compressed, verified: result.verified };
      log.info("hop.uploaded", { hop: this.spec.name, bytes: binary.bytes.length, wire_bytes: result.wireBytes, verified: result.verified, ms: Date.now() - started });
      const runs = await binaryRunsCheck(ssh, binPath, COMMAND_TIMEOUT_MS);
      if (!runs.ok) return this.fallBack(`the uploaded agentd does not run there: ${runs.reason}`, progress);
    }
    progress({ step: "start", message: "starting the remote agentd" });
    try {
      await this.startRemote(ssh, !same);
    } catch (error) {
      if (error instanceof HopError && error.code === "hop_remote_start_failed") return this.fallBack(error.message, progress);
      throw error;
    }
    progress({ step: "tunnel", message: "opening the tunnel" });
    this.mode = "agentd";
    const tunnel = new ForwardTunnel(() => {
      const live = this.liveSsh();
      return live && this.remotePort ? forwardOut(live, "127.0.0.1", this.remotePort) : Promise.reject(this.unavailable());
    });
    await tunnel.listen();
    this.tunnel = tunnel;
    this.remoteClient = new HttpRemoteAgentdClient(this.spec.name, {
      baseUrl: () => this.tunnelUrl,
      token: () => this.remoteToken,
      unavailable: () => this.unavailable(),
      callTimeoutMarginMs: config.call_timeout_margin_ms,
    });
    await this.checkThroughTunnel(ssh);
  }

  /** Makes sure the remote agentd runs (requiring its token) and takes its port, version and token. */
  private async startRemote(ssh: Client, restart: boolean): Promise<void> {
    const { ready, token } = await ensureRemoteDaemon({
      client: ssh,
      binPath: `${this.remoteDir}/bin/agentd`,
      dataDir: this.remoteDir!,
      setsid: this.facts?.setsid ?? true,
      restart,
      readyTimeoutMs: this.deps.config.remote_ready_timeout_ms,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      log: this.deps.log,
    });
    this.remotePort = ready.port;
    this.remoteVersion = ready.version;
    this.remoteToken = token;
  }

  /**
   * Checks the remote agentd through the tunnel: it answers /livez (no token needed), refuses a
   * request without the token and accepts the hop's. One that answers without the token (started
   * before hops required it) or refuses the hop's is ours, so it is restarted with --require-token
   * once; its PTY sessions end with it.
   */
  private async checkThroughTunnel(ssh: Client): Promise<void> {
    const base = `http://127.0.0.1:${this.tunnel!.port}`;
    const live = await fetch(`${base}/livez`, { signal: AbortSignal.timeout(COMMAND_TIMEOUT_MS) }).catch((error: unknown) => error as Error);
    if (live instanceof Error || !live.ok) throw new HopError("hop_remote_start_failed", `The remote agentd does not answer through the tunnel: ${live instanceof Error ? live.message : `HTTP ${live.status}`}`);
    await live.arrayBuffer();
    let auth = await probeRemoteAuth(base, this.remoteToken!, COMMAND_TIMEOUT_MS);
    if (auth === "ok") return;
    this.deps.log.warn("hop.remote_restarting", { hop: this.spec.name, reason: auth === "open" ? "the remote agentd answers without a token" : "the remote agentd refuses the token in its data dir" });
    await this.startRemote(ssh, true);
    // Pooled connections through the tunnel led to the old process's port.
    this.tunnel!.dropConnections();
    auth = await probeRemoteAuth(base, this.remoteToken!, COMMAND_TIMEOUT_MS);
    if (auth !== "ok") throw new HopError("hop_remote_start_failed", `The restarted remote agentd ${auth === "open" ? "still answers without a token" : "refuses the token in its data dir"}`);
  }

  private fallBack(reason: string, progress: (event: HopProgress) => void): void {
    this.mode = "fallback";
    this.fallbackReason = reason;
    this.remoteVersion = null;
    this.deps.log.warn("hop.fallback", { hop: this.spec.name, reason });
    progress({ step: "start", message: `fallback: ${reason}; commands will run over SSH exec with a pty` });
  }

  /** After a reconnect: the remote agentd normally still runs; start it again if the host rebooted. */
  private async restartIfGone(ssh: Client): Promise<void> {
    const binary = await this.deps.binary();
    const before = this.remotePort;
    await this.startRemote(ssh, false);
    await this.checkThroughTunnel(ssh);
    if (this.remotePort !== before) this.deps.log.warn("hop.remote_restarted", { hop: this.spec.name, note: "the remote agentd is a new process; its earlier sessions are gone", version: binary.version });
  }

  private async onDrop(chain: SshChain): Promise<void> {
    if (this.chain !== chain || this.stopping.signal.aborted) return;
    const { config, log } = this.deps;
    this.chain = undefined;
    this.tunnel?.dropConnections();
    if (this.remoteClient instanceof FallbackClient) this.remoteClient.dropAllSessions();
    this.setState("reconnecting");
    log.warn("hop.disconnected", { hop: this.spec.name });
    await this.reconnect(Date.now() + config.reconnect_give_up_s * 1000);
  }

  /** Retries with backoff until connected, closed, refused by a host key, or past `giveUpAt`. */
  private async reconnect(giveUpAt: number): Promise<void> {
    const { config, log } = this.deps;
    let delay = config.reconnect_initial_ms;
    for (let attempt = 1; !this.stopping.signal.aborted; attempt++) {
      try {
        await this.establish(() => undefined, false);
        if (this.stopping.signal.aborted) {
          // Closed while this attempt was connecting: drop what it built.
          this.dropChain();
          await this.tunnel?.close();
          return;
        }
        log.info("hop.reconnected", { hop: this.spec.name, attempt });
        return;
      } catch (error) {
        this.dropChain();
        if (this.stopping.signal.aborted) return;
        this.lastError = (error as Error).message;
        this.setState("reconnecting");
        log.warn("hop.reconnect_failed", { hop: this.spec.name, attempt, error, next_ms: delay });
        if ((error instanceof HopError && (error.code === "hop_host_key_changed" || error.code === "hop_host_unknown")) || Date.now() >= giveUpAt) {
          await this.tunnel?.close();
          this.setState("closed");
          return;
        }
      }
      await abortableSleep(delay * (0.8 + Math.random() * 0.4), this.stopping.signal);
      delay = Math.min(delay * 2, config.reconnect_max_ms);
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
      return new HopError("hop_disconnected", `Hop ${this.spec.name} lost its connection and is reconnecting${this.lastError ? ` (last attempt: ${this.lastError})` : ""}; try again shortly`);
    }
    if (this.state === "closed") return new HopError("hop_closed", `Hop ${this.spec.name} is closed${this.lastError ? `: ${this.lastError}` : ""}`);
    return new HopError("hop_disconnected", `Hop ${this.spec.name} is not connected yet`);
  }

  private setState(state: HopState): void {
    // Once closed, a connect attempt still in flight must not show the hop as up again.
    if (this.state === state || (this.stopping.signal.aborted && state !== "closed")) return;
    this.state = state;
    this.lastChange = Date.now();
    this.deps.onChange(this);
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
