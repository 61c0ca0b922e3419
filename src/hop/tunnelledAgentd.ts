import type { Client } from "ssh2";
import type { HopsConfig } from "../core/config/sections/hopConfig.ts";
import type { Logger } from "../core/log/index.ts";
import { VERSION } from "../core/version.ts";
import { ForwardTunnel } from "./forwardTunnel.ts";
import { installAgentd, type InstallOptions } from "./agentdInstall.ts";
import { HopError } from "./hopErrors.ts";
import { HttpRemoteAgentdClient } from "./remoteAgentdClient.ts";
import { RemoteAgentdLink, type RemoteAgentdPlace } from "./remoteAgentdLink.ts";
import { forwardOut } from "./sshChain.ts";

export interface TunnelledAgentdOptions {
  hop: string;
  config: HopsConfig;
  commandTimeoutMs: number;
  log: Logger;
  /** The SSH connection to the target while it is up. */
  liveSsh(): Client | undefined;
  /** The tunnel's URL while the hop is connected. */
  baseUrl(): string | undefined;
  /** What a call gets while the hop cannot carry it. */
  unavailable(): HopError;
}

/**
 * A hop's remote agentd in agentd mode: installed and started there, the loopback tunnel to it (each
 * connection a fresh channel over whichever SSH link is live), and the HTTP client through it.
 */
export class TunnelledAgentd {
  private readonly daemon: RemoteAgentdLink;
  private tunnel: ForwardTunnel | undefined;

  constructor(private readonly options: TunnelledAgentdOptions) {
    this.daemon = new RemoteAgentdLink({
      hop: options.hop,
      readyTimeoutMs: options.config.remote_ready_timeout_ms,
      commandTimeoutMs: options.commandTimeoutMs,
      log: options.log,
    });
  }

  get version(): string | null {
    return this.daemon.version;
  }

  /** The tunnel's local port once it listens. */
  get tunnelPort(): number | undefined {
    return this.tunnel?.port;
  }

  /**
   * Puts this agentd on the host (unless the same build is there) and starts it there; gives the
   * reason for the fallback when it cannot run on that host or does not start.
   */
  async installAndStart(
    request: Omit<InstallOptions, "hop" | "commandTimeoutMs" | "log">,
    place: RemoteAgentdPlace,
  ): Promise<{ reason: string } | undefined> {
    const { hop, commandTimeoutMs, log } = this.options;
    const install = { ...request, hop, commandTimeoutMs, log };
    const outcome = await installAgentd(install);
    if (outcome.kind === "fallback") return { reason: outcome.reason };
    install.progress({ step: "start", message: "starting the remote agentd" });
    try {
      await this.daemon.start(install.ssh, place, outcome.uploaded);
    } catch (error) {
      if (error instanceof HopError && error.code === "hop_remote_start_failed") return { reason: error.message };
      throw error;
    }
    return undefined;
  }

  /** Opens the tunnel to the started agentd and gives the client that calls it through the tunnel. */
  async openTunnel(): Promise<HttpRemoteAgentdClient> {
    const { liveSsh, unavailable } = this.options;
    const tunnel = new ForwardTunnel(() => {
      const live = liveSsh();
      return live && this.daemon.port ? forwardOut(live, "127.0.0.1", this.daemon.port) : Promise.reject(unavailable());
    });
    await tunnel.listen();
    this.tunnel = tunnel;
    return new HttpRemoteAgentdClient(this.options.hop, {
      baseUrl: this.options.baseUrl,
      token: () => this.daemon.token,
      unavailable,
      callTimeoutMarginMs: this.options.config.call_timeout_margin_ms,
    });
  }

  /** Checks through the open tunnel that the remote agentd answers and requires the hop's token (restarting it once if not). */
  check(ssh: Client, place: RemoteAgentdPlace): Promise<void> {
    return this.daemon.checkThroughTunnel(ssh, place, this.tunnel!);
  }

  /** After a reconnect: the remote agentd normally still runs; start it again if the host rebooted. */
  async restartIfGone(ssh: Client, place: RemoteAgentdPlace): Promise<void> {
    const before = this.daemon.port;
    await this.daemon.start(ssh, place, false);
    await this.check(ssh, place);
    if (this.daemon.port !== before)
      this.options.log.warn("hop.remote_restarted", {
        hop: this.options.hop,
        note: "the remote agentd is a new process; its earlier sessions are gone",
        version: VERSION,
      });
  }

  /** Ends the connections through the tunnel (they led over an SSH link that is gone). */
  dropConnections(): void {
    this.tunnel?.dropConnections();
  }

  async closeTunnel(): Promise<void> {
    await this.tunnel?.close();
  }
}
