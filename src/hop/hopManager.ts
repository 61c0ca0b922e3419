import type { Database } from "bun:sqlite";
import { createLogger, type Logger } from "../core/log/index.ts";
import { scheduleCodeRelease } from "../core/process/index.ts";
import type { UploadReport } from "./agentdInstall.ts";
import { formatDestination, parseDestination } from "./destination.ts";
import type { HopsConfig } from "../core/config/sections/hopConfig.ts";
import { HopConnection } from "./hopConnection.ts";
import type { HopSpec, HopState } from "./hopSpec.ts";
import type { HopProgress } from "./hopProgress.ts";
import { HopError } from "./hopErrors.ts";
import { HopStore, RESUMABLE_STATES, type HopRecord } from "./hopStore.ts";
import { createLocalBinarySource, type LocalBinary } from "./localBinary.ts";
import type { RemoteAgentdClient } from "./remoteAgentdClient.ts";
import { expandHome, localUserName } from "./sshAuth.ts";

export interface HopManagerOptions {
  db: Database;
  dataDir: string;
  config: HopsConfig;
  logger?: Logger;
  /** The agentd binary to copy: process.execPath when compiled; undefined when running from source. */
  selfBinaryPath: string | undefined;
}

export interface OpenHopRequest {
  /** user@host[:port] */
  destination: string;
  /** Jump hosts in order, each user@host[:port]. */
  via?: string[];
  /** Private key file (local path); default: ~/.ssh/id_* and the ssh-agent. */
  identity?: string;
  /** Add an unknown host's key to known_hosts (a changed key is always refused). */
  accept_new?: boolean;
  name?: string;
}

/** A hop as `agentd hops`, /api/hops and the status page show it. */
export interface HopInfo {
  name: string;
  destination: string;
  via: string[];
  /** Jump hosts then the target. */
  chain: string[];
  state: HopState;
  mode: "agentd" | "fallback" | null;
  remote_version: string | null;
  /** e.g. "Linux x86_64 glibc". */
  remote_platform: string | null;
  remote_dir: string | null;
  /** The local end of the tunnel to the remote agentd while connected (its API still needs the remote's token). */
  tunnel_url: string | null;
  fallback_reason: string | null;
  last_error: string | null;
  opened_at: number;
  last_change: number;
  upload: UploadReport | null;
}

export interface HopManager {
  open(request: OpenHopRequest, onProgress?: (event: HopProgress) => void): Promise<HopInfo>;
  list(): HopInfo[];
  get(name: string): HopInfo;
  /** The tool client of a live hop; throws hop_not_found / hop_closed. */
  client(name: string): RemoteAgentdClient;
  /** Closes a hop for good: it stays closed across worker restarts until opened again. */
  closeHop(
    name: string,
    options?: { stopRemote?: boolean },
  ): Promise<{ name: string; stopped_remote: boolean; remote_agentd: "stopped" | "running" | "none" }>;
  /**
   * At worker stop: ends every hop's tunnel and SSH chain (remote agentds keep running) without
   * recording them closed, so the next worker's manager reopens them.
   */
  close(): Promise<void>;
}

const NAME = /^[A-Za-z0-9._-]{1,64}$/;

function infoOf(hop: HopConnection): HopInfo {
  const via = hop.spec.via.map(formatDestination);
  const destination = formatDestination(hop.spec.target);
  const facts = hop.facts;
  return {
    name: hop.spec.name,
    destination,
    via,
    chain: [...via, destination],
    state: hop.state,
    mode: hop.mode,
    remote_version: hop.remoteVersion,
    remote_platform: facts ? `${facts.os} ${facts.machine} ${facts.libc}` : null,
    remote_dir: hop.remoteDir ?? null,
    tunnel_url: hop.tunnelUrl ?? null,
    fallback_reason: hop.fallbackReason ?? null,
    last_error: hop.lastError ?? null,
    opened_at: hop.openedAt,
    last_change: hop.lastChange,
    upload: hop.upload ?? null,
  };
}

/**
 * Owns the worker's hops. At start it reopens, in the background, the hops the previous worker
 * had open (they show `reconnecting` until connected); the remote agentds kept running, so their
 * PTY sessions are still there.
 */
export function createHopManager(options: HopManagerOptions): HopManager {
  const log = options.logger ?? createLogger("hop");
  const store = new HopStore(options.db);
  store.closeUnfinishedOpens("agentd restarted before the hop finished opening; open it again", Date.now());
  const hops = new Map<string, HopConnection>();
  // Set at worker stop: the hops' last states stay in the store for the next worker to resume.
  let stopping = false;
  const binarySource = options.selfBinaryPath ? createLocalBinarySource(options.selfBinaryPath) : undefined;
  const binary = (): Promise<LocalBinary> =>
    binarySource?.() ??
    Promise.reject(
      new HopError(
        "hop_upload_failed",
        "This agentd runs from source, so there is no single binary to copy; build one with `npm run build` and run ./agentd",
      ),
    );

  // What an earlier worker ran on each resumed hop: kept until this worker's connection finds out
  // itself, so the record still says an agentd runs there (for `hop --close --stop-remote`).
  const earlierModes = new Map<string, HopInfo["mode"]>();
  const persist = (hop: HopConnection) => {
    if (stopping) return;
    const info = infoOf(hop);
    const mode = info.mode ?? earlierModes.get(info.name) ?? null;
    store.save({ ...info, identity: hop.spec.identity ?? null, mode, last_error: info.last_error ?? info.fallback_reason });
    log.info("hop.state", { hop: info.name, state: info.state, mode: info.mode });
    // Connecting was one-off work (the binary hashed and uploaded, an SSH handshake): its code goes.
    if (info.state === "connected" || info.state === "fallback") scheduleCodeRelease(log, `hop.${info.state}`);
  };

  const connection = (spec: HopSpec, openedAt?: number) =>
    new HopConnection(spec, { config: options.config, binary, log: log.child(spec.name), onChange: persist, openedAt });

  /** A stored hop's spec; accept_new is never kept: the key it accepted is in known_hosts now. */
  const specOf = (record: HopRecord): HopSpec => {
    const user = localUserName();
    return {
      name: record.name,
      target: parseDestination(record.destination, user),
      via: record.via.map((hop) => parseDestination(hop, user)),
      identity: record.identity ?? undefined,
      acceptNew: false,
    };
  };

  const resume = (record: HopRecord) => {
    let spec: HopSpec;
    try {
      spec = specOf(record);
    } catch (error) {
      store.markClosed(record.name, `Cannot reopen the hop after a restart: ${(error as Error).message}`, Date.now());
      log.warn("hop.resume_failed", { hop: record.name, error });
      return;
    }
    earlierModes.set(record.name, record.mode as HopInfo["mode"]);
    const hop = connection(spec, record.opened_at);
    hops.set(record.name, hop);
    log.info("hop.resuming", { hop: record.name, previous_state: record.state });
    // A hop already reconnecting keeps its give-up deadline from when it dropped.
    hop.resume(record.state === "reconnecting" ? record.last_change : Date.now());
  };

  const live = (name: string): HopConnection => {
    const hop = hops.get(name);
    if (!hop) throw new HopError("hop_not_found", `No hop named ${name}; open one with agentd hop user@host`);
    return hop;
  };

  // A failed attempt (open refused, reconnect given up) stays listed long enough to read why, then goes.
  const expireFailed = () => {
    if (options.config.failed_expiry_s === 0) return;
    const before = Date.now() - options.config.failed_expiry_s * 1000;
    for (const [name, hop] of hops) if (hop.state === "closed" && hop.lastError && hop.lastChange < before && !stopping) hops.delete(name);
    const expired = store.expireFailed(before);
    if (expired.length > 0) log.info("hop.expired", { hops: expired, after_s: options.config.failed_expiry_s });
  };

  const manager: HopManager = {
    async open(request, onProgress = () => undefined) {
      const user = localUserName();
      const target = parseDestination(request.destination, user);
      const via = (request.via ?? []).filter((hop) => hop.trim()).map((hop) => parseDestination(hop, user));
      const name = request.name ?? (target.port === 22 ? target.host : `${target.host}-${target.port}`);
      if (!NAME.test(name))
        throw new HopError("hop_bad_destination", `Hop name "${name}" may only use letters, digits, ".", "_" and "-" (at most 64)`);
      const existing = hops.get(name);
      if (existing && existing.state !== "closed") {
        const same =
          formatDestination(existing.spec.target) === formatDestination(target) &&
          existing.spec.via.map(formatDestination).join() === via.map(formatDestination).join();
        if (same) return infoOf(existing);
        throw new HopError(
          "hop_name_taken",
          `Hop ${name} is already open to ${formatDestination(existing.spec.target)}; pass --name or close it first`,
        );
      }
      const hop = connection({
        name,
        target,
        via,
        identity: request.identity ? expandHome(request.identity) : undefined,
        acceptNew: request.accept_new ?? false,
      });
      hops.set(name, hop);
      persist(hop);
      try {
        await hop.open(onProgress);
      } catch (error) {
        log.warn("hop.open_failed", { hop: name, error });
        throw error;
      }
      return infoOf(hop);
    },
    list() {
      expireFailed();
      const shown = new Set(hops.keys());
      const stored = store.list().filter((record) => !shown.has(record.name));
      const fromStore: HopInfo[] = stored.map((record) => ({
        name: record.name,
        destination: record.destination,
        via: record.via,
        chain: [...record.via, record.destination],
        state: "closed",
        mode: record.mode as HopInfo["mode"],
        remote_version: record.remote_version,
        remote_platform: record.remote_platform,
        remote_dir: null,
        tunnel_url: null,
        fallback_reason: null,
        last_error: record.last_error,
        opened_at: record.opened_at,
        last_change: record.last_change,
        upload: null,
      }));
      return [...[...hops.values()].map(infoOf), ...fromStore].sort((a, b) => b.opened_at - a.opened_at);
    },
    get(name) {
      const found = manager.list().find((hop) => hop.name === name);
      if (!found) throw new HopError("hop_not_found", `No hop named ${name}`);
      return found;
    },
    client(name) {
      const hop = live(name);
      if (hop.state === "closed")
        throw new HopError(
          "hop_closed",
          `Hop ${name} is closed${hop.lastError ? `: ${hop.lastError}` : ""}; open it again with agentd hop`,
        );
      if (!hop.client) throw new HopError("hop_disconnected", `Hop ${name} is still connecting`);
      return hop.client;
    },
    async closeHop(name, closeOptions = {}) {
      // Any name `hops` lists: a hop closed before this worker started is rebuilt from its record,
      // so its remote agentd can still be stopped.
      const record = store.list().find((stored) => stored.name === name);
      const kept = hops.get(name);
      if (!kept && !record) throw new HopError("hop_not_found", `No hop named ${name}; agentd hops lists them`);
      if (!kept) earlierModes.set(name, record!.mode as HopInfo["mode"]);
      const hop = kept ?? connection(specOf(record!), record!.opened_at);
      // Whether an agentd ran there is known before closing: fallback mode never started one.
      const ranAgentd = (hop.mode ?? earlierModes.get(name)) === "agentd";
      const stopped = await hop.close(closeOptions.stopRemote ?? false, ranAgentd);
      const remote = stopped ? "stopped" : ranAgentd ? "running" : "none";
      log.info("hop.closed", { hop: name, stopped_remote: stopped, remote_agentd: remote });
      return { name, stopped_remote: stopped, remote_agentd: remote };
    },
    async close() {
      stopping = true;
      const kept = [...hops.values()]
        .filter((hop) => (RESUMABLE_STATES as readonly string[]).includes(hop.state))
        .map((hop) => hop.spec.name);
      await Promise.all([...hops.values()].map((hop) => hop.close(false)));
      log.info("hop.tunnels_closed", { kept_for_restart: kept });
    },
  };
  for (const record of store.resumable()) resume(record);
  return manager;
}
