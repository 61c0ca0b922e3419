import type { Logger } from "../core/log/index.ts";
import type { HopInfo, HopManager } from "./hopManager.ts";

/** What the hop list shows of a remote agentd: its own verdict and its open incidents. */
export interface RemoteOverview {
  /** The remote /health status (pass, warn, fail), or null when it could not be read. */
  health: string | null;
  /** Unresolved incidents on the remote host, or null when unknown. */
  incidents_open: number | null;
  /**
   * How the remote host keeps commands from its agentd: `command_user`, `namespaces`, `unguarded`
   * (its start mode), `none` for a fallback hop (plain SSH exec), null when unknown.
   */
  gate: string | null;
}

export type HopListRow = HopInfo & RemoteOverview;

const UNKNOWN: RemoteOverview = { health: null, incidents_open: null, gate: null };

/**
 * The hop list with each connected hop's health and open incidents, read from its remote agentd
 * through the tunnel. Reads are cached for `ttlMs` and refreshed in the background, so listing
 * (the page polls it) never waits on a slow or hung host.
 */
export class RemoteOverviews {
  readonly #cache = new Map<string, { value: RemoteOverview; at: number; refreshing: boolean }>();

  constructor(
    private readonly manager: HopManager,
    private readonly logger: Logger,
    private readonly ttlMs = 5000,
  ) {}

  list(): HopListRow[] {
    const now = Date.now();
    return this.manager.list().map((hop) => {
      if (hop.state !== "connected" || hop.mode !== "agentd") {
        this.#cache.delete(hop.name);
        return { ...hop, ...UNKNOWN, ...(hop.state === "connected" ? { gate: "none" } : {}) };
      }
      const cached = this.#cache.get(hop.name);
      if (!cached || (now - cached.at >= this.ttlMs && !cached.refreshing)) this.#refresh(hop.name, cached?.value ?? UNKNOWN);
      return { ...hop, ...(cached?.value ?? UNKNOWN) };
    });
  }

  #refresh(name: string, previous: RemoteOverview): void {
    const entry = { value: previous, at: this.#cache.get(name)?.at ?? 0, refreshing: true };
    this.#cache.set(name, entry);
    const read = async (): Promise<RemoteOverview> => {
      const client = this.manager.client(name);
      return client.overview ? await client.overview(AbortSignal.timeout(this.ttlMs)) : UNKNOWN;
    };
    read()
      .then(
        (value) => value,
        (error: unknown) => {
          this.logger.debug("hop.overview_failed", { hop: name, error });
          return UNKNOWN;
        },
      )
      .then((value) => {
        entry.value = value;
        entry.at = Date.now();
        entry.refreshing = false;
      })
      .catch((error: unknown) => this.logger.error("hop.overview_failed", { hop: name, error }));
  }
}
