import type { Client } from "ssh2";
import type { Logger } from "../core/log/index.ts";
import type { ForwardTunnel } from "./forwardTunnel.ts";
import { HopError } from "./hopErrors.ts";
import { probeRemoteAuth } from "./remoteAuth.ts";
import { ensureRemoteDaemon } from "./remoteDaemon.ts";

export interface RemoteAgentdPlace {
  dataDir: string;
  setsid: boolean;
}

export interface RemoteAgentdLinkOptions {
  hop: string;
  readyTimeoutMs: number;
  commandTimeoutMs: number;
  log: Logger;
}

/** A hop's hold on its remote agentd: starting it, and the port, version and token it took from it. */
export class RemoteAgentdLink {
  port: number | undefined;
  version: string | null = null;
  /** The remote agentd's bearer token: in memory only, never in the store, a log line or an error. */
  private bearer: string | undefined;

  constructor(private readonly options: RemoteAgentdLinkOptions) {}

  get token(): string | undefined {
    return this.bearer;
  }

  /** Makes sure the remote agentd runs (requiring its token) and takes its port, version and token. */
  async start(ssh: Client, place: RemoteAgentdPlace, restart: boolean): Promise<void> {
    const { ready, token } = await ensureRemoteDaemon({
      client: ssh,
      binPath: `${place.dataDir}/bin/agentd`,
      dataDir: place.dataDir,
      setsid: place.setsid,
      restart,
      readyTimeoutMs: this.options.readyTimeoutMs,
      commandTimeoutMs: this.options.commandTimeoutMs,
      log: this.options.log,
    });
    this.port = ready.port;
    this.version = ready.version;
    this.bearer = token;
  }

  /**
   * Checks the remote agentd through the tunnel: it answers /livez (no token needed), refuses a
   * request without the token and accepts the hop's. One that answers without the token (started
   * before hops required it) or refuses the hop's is ours, so it is restarted with --require-token
   * once; its PTY sessions end with it.
   */
  async checkThroughTunnel(ssh: Client, place: RemoteAgentdPlace, tunnel: ForwardTunnel): Promise<void> {
    const { commandTimeoutMs } = this.options;
    const base = `http://127.0.0.1:${tunnel.port}`;
    const live = await fetch(`${base}/livez`, { signal: AbortSignal.timeout(commandTimeoutMs) }).catch((error: unknown) => error as Error);
    if (live instanceof Error || !live.ok)
      throw new HopError(
        "hop_remote_start_failed",
        `The remote agentd does not answer through the tunnel: ${live instanceof Error ? live.message : `HTTP ${live.status}`}`,
      );
    await live.arrayBuffer();
    let auth = await probeRemoteAuth(base, this.bearer!, commandTimeoutMs);
    if (auth === "ok") return;
    this.options.log.warn("hop.remote_restarting", {
      hop: this.options.hop,
      reason: auth === "open" ? "the remote agentd answers without a token" : "the remote agentd refuses the token in its data dir",
    });
    await this.start(ssh, place, true);
    // Pooled connections through the tunnel led to the old process's port.
    tunnel.dropConnections();
    auth = await probeRemoteAuth(base, this.bearer!, commandTimeoutMs);
    if (auth !== "ok")
      throw new HopError(
        "hop_remote_start_failed",
        `The restarted remote agentd ${auth === "open" ? "still answers without a token" : "refuses the token in its data dir"}`,
      );
  }
}
