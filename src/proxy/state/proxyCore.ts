import type { Database } from "bun:sqlite";
import { AgentdError } from "../../core/errors/index.ts";
import type { Logger } from "../../core/log/index.ts";
import type { MetricFamily } from "../../core/metrics/index.ts";
import { ClientGoneError } from "../upstream/clientGone.ts";
import {
  dispatch,
  type Committed,
  type DispatchPlan,
  type DispatchSettings,
  type DispatchTally,
  type Wire,
} from "../upstream/dispatcher.ts";
import type { ProviderConfig, ProxyConfig } from "../../core/config/sections/providerConfig.ts";
import { routeModel, type Route, type RouteCandidate } from "../upstream/providerRouter.ts";
import { ProviderRuntime } from "../upstream/providerRuntime.ts";
import { ProxyError } from "../upstream/proxyError.ts";
import { ProxyMetrics } from "./proxyMetrics.ts";
import { ModelSwitches } from "./modelSwitches.ts";
import { QuirkStore } from "../upstream/quirkStore.ts";
import { RequestRecorder } from "./requestRecorder.ts";
import { ResponseStore } from "./responseStore.ts";
import { RollupBuffer } from "./rollupBuffer.ts";
import type { UpstreamFailure } from "../upstream/upstreamFailure.ts";
import { NOOP_TRACER, type Tracer } from "../../telemetry/index.ts";
import { startRequestTrace, type RequestTrace } from "./requestTrace.ts";

/**
 * A committed answer carries its trace under a key of its own: a WeakMap entry per request costs
 * more (the collector tends every weak entry) than a property on an object that dies with it.
 */
const TRACE = Symbol("trace");
type Traced = Committed & { [TRACE]?: RequestTrace };

/** The proxy's running state shared by its routes: providers, stores, counters. */
export class ProxyCore {
  readonly providers: ProviderRuntime[];
  readonly metrics = new ProxyMetrics();
  /** Providers the watchdog switched away from for one model (its tool calls keep failing there). */
  readonly modelSwitches = new ModelSwitches();
  readonly rollups = new RollupBuffer();
  readonly recorder: RequestRecorder;
  readonly responses: ResponseStore;
  readonly quirkStore: QuirkStore;
  readonly settings: DispatchSettings;
  readonly #byName = new Map<string, ProviderRuntime>();
  /** The route candidates of each list of wires a route asks for (its own constant), made once per provider list. */
  #candidates = new WeakMap<readonly Wire[], RouteCandidate<ProviderRuntime>[]>();

  constructor(
    providers: readonly ProviderConfig[],
    readonly config: ProxyConfig,
    readonly db: Database,
    readonly logger: Logger,
    readonly tracer: Tracer = NOOP_TRACER,
  ) {
    this.providers = providers.map((p) => new ProviderRuntime(p, config.breaker, logger));
    for (const provider of this.providers) this.#byName.set(provider.name, provider);
    this.recorder = new RequestRecorder(logger, this.metrics, this.rollups);
    this.responses = new ResponseStore(db, config.response_ttl_s * 1000);
    this.quirkStore = new QuirkStore(db, config.quirk_ttl_s * 1000);
    for (const quirk of this.quirkStore.live()) this.#byName.get(quirk.provider)?.quirks.add(quirk.param);
    this.settings = {
      baseMs: config.retry_base_ms,
      maxMs: config.retry_max_ms,
      retryAfterCapMs: config.retry_after_cap_ms,
      clientRetryAfterCapMs: config.client_retry_after_cap_ms,
      maxAttemptsPerProvider: config.max_attempts,
      maxTotalAttempts: config.max_total_attempts,
      ownClient: config.upstream_client === "auto",
      onQuirk: (provider, param, detail) => this.#learnQuirk(provider, param, detail),
      onFailure: (provider, failure, model, attempt) => this.noteFailure(provider, failure, model, attempt),
    };
  }

  /**
   * A config reload: the new list, in its order. A provider whose config did not change keeps its
   * runtime (health, breaker, learnt quirks); requests already routed finish on the one they hold.
   */
  replaceProviders(providers: readonly ProviderConfig[]): void {
    const next = providers.map((config) => {
      const kept = this.#byName.get(config.name);
      return kept && JSON.stringify(kept.config) === JSON.stringify(config)
        ? kept
        : new ProviderRuntime(config, this.config.breaker, this.logger);
    });
    this.providers.splice(0, this.providers.length, ...next);
    this.#candidates = new WeakMap();
    this.#byName.clear();
    for (const provider of next) this.#byName.set(provider.name, provider);
    for (const quirk of this.quirkStore.live()) this.#byName.get(quirk.provider)?.quirks.add(quirk.param);
  }

  provider(name: string): ProviderRuntime | undefined {
    return this.#byName.get(name);
  }

  /** Providers that serve `model` over one of `wires`, in the order to try them; 404 when none does. */
  routes(model: string, wires: readonly Wire[]): Route<ProviderRuntime>[] {
    const routes = this.modelSwitches.order(routeModel(this.#candidatesFor(wires), model), model, Date.now());
    if (routes.length === 0) {
      throw new ProxyError(
        "model_not_found",
        `No configured provider serves the model '${model}'${wires.length === 1 ? ` over the ${wires[0]} API` : ""}; add it to a provider's "models" or "aliases" in agentd.jsonc`,
        { param: "model" },
      );
    }
    return routes;
  }

  /** Keyed by the list itself: the routes pass constants (dispatcher.ts's WIRES). */
  #candidatesFor(wires: readonly Wire[]): RouteCandidate<ProviderRuntime>[] {
    let candidates = this.#candidates.get(wires);
    if (candidates) return candidates;
    candidates = this.providers
      .filter((provider) => wires.includes(provider.config.wire))
      .map((provider) => ({
        provider,
        name: provider.name,
        priority: provider.config.priority,
        weight: provider.config.weight,
        matcher: provider.matcher,
        health: () => ({ errorRate: provider.health.errorRate(), latencyMs: provider.health.latencyMs() }),
      }));
    this.#candidates.set(wires, candidates);
    return candidates;
  }

  /**
   * Dispatches, counting a request that found no upstream answer under the last provider tried
   * (the answered ones are counted at their end).
   */
  async dispatch(clientPlan: DispatchPlan, model: string, t0: number): Promise<Committed> {
    const tally: DispatchTally = { attempts: 0 };
    const { trace, plan } = startRequestTrace(this.tracer, clientPlan, model);
    try {
      const committed = await dispatch(plan, this.settings, tally);
      (committed as Traced)[TRACE] = trace;
      return committed;
    } catch (error) {
      const gone = error instanceof ClientGoneError;
      const status = gone ? 499 : error instanceof AgentdError ? error.status : 500;
      this.recorder.record({
        provider: tally.provider,
        model,
        outcome: gone ? "client_gone" : "error",
        status,
        totalMs: performance.now() - t0,
        tokensIn: 0,
        tokensOut: 0,
        attempts: tally.attempts,
        trace,
      });
      throw error;
    }
  }

  traceOf(committed: Committed): RequestTrace | undefined {
    return (committed as Traced)[TRACE];
  }

  /** /metrics: the request counters and histograms, and each provider's breaker state. */
  metricFamilies(): MetricFamily[] {
    this.recorder.flush();
    return this.metrics.families(this.providers.map((p) => ({ provider: p.name, state: p.breaker.state() })));
  }

  noteFailure(provider: ProviderRuntime, failure: UpstreamFailure, model: string, attempt: number): void {
    provider.errors++;
    this.logger.warn("upstream.error", {
      provider: provider.name,
      status: failure.status,
      cause: failure.kind,
      model,
      attempt,
      message: failure.message,
    });
    this.metrics.upstreamError(provider.name, failure.kind);
    provider.health.record(false);
    provider.breaker.onFailure(failure.kind);
  }

  /**
   * Reports what the answering route left out of the request: a debug line, a counter per field,
   * and the `x-agentd-dropped` header (set into `headers`).
   */
  reportDropped(committed: Committed, headers: Record<string, string>, model: string): void {
    const fields = committed.dropped;
    if (fields.length === 0) return;
    for (const field of fields) this.metrics.droppedField(field);
    this.logger.debug("proxy.field_dropped", { provider: committed.provider.name, wire: committed.wire, model, fields });
    headers["x-agentd-dropped"] = fields.join(",");
  }

  #learnQuirk(provider: ProviderRuntime, param: string, detail: string): void {
    provider.quirks.add(param);
    this.logger.warn("proxy.quirk_learned", { provider: provider.name, param, detail });
    this.quirkStore.remember(provider.name, param, detail);
  }

  /** Writes pending rollups and drops expired responses; run on a timer and at close. */
  maintain(): void {
    this.recorder.flush();
    this.rollups.flush(this.db);
    this.responses.purgeExpired();
  }
}
