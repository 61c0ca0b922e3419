import type { Context } from "hono";
import type { Logger } from "../../core/log/index.ts";
import { compileGlob, isGlob } from "../upstream/modelMatcher.ts";
import type { ProviderRuntime } from "../upstream/providerRuntime.ts";
import { ProxyError } from "../upstream/proxyError.ts";

const CACHE_MS = 60_000;

interface Listed {
  id: string;
  owned_by: string;
}

/**
 * GET /v1/models: the union of what the providers serve — names and aliases from the config,
 * and for glob patterns the upstream's own list filtered by the glob (cached a minute).
 */
export class ModelCatalog {
  readonly #cache = new Map<string, { at: number; ids: string[] }>();

  constructor(
    private readonly providers: readonly ProviderRuntime[],
    private readonly logger: Logger,
  ) {}

  async handle(c: Context): Promise<Response> {
    const seen = new Map<string, Listed>();
    const add = (id: string, provider: string) => {
      if (!seen.has(id)) seen.set(id, { id, owned_by: provider });
    };
    await Promise.all(
      this.providers.map(async (provider) => {
        for (const alias of Object.keys(provider.config.aliases)) add(alias, provider.name);
        const globs = provider.config.models.filter(isGlob);
        for (const name of provider.config.models) if (!isGlob(name)) add(name, provider.name);
        if (globs.length === 0 || provider.breaker.state() === "open") return;
        const matchers = globs.map(compileGlob);
        for (const id of await this.#upstreamModels(provider)) if (matchers.some((match) => match(id))) add(id, provider.name);
      }),
    );
    return c.json({
      object: "list",
      data: [...seen.values()].map((m) => ({ id: m.id, object: "model", created: 0, owned_by: m.owned_by })),
    });
  }

  /**
   * GET /v1/models/:id: a model some provider serves — named or aliased in the config, or matched
   * by a glob and listed by that upstream (or matched when the upstream's list cannot be had).
   */
  async retrieve(c: Context): Promise<Response> {
    const id = c.req.param("id") ?? "";
    for (const provider of this.providers) {
      if (provider.matcher.resolve(id) === undefined) continue;
      const named = id in provider.config.aliases || provider.config.models.some((name) => !isGlob(name) && name === id);
      if (!named && provider.breaker.state() !== "open") {
        const listed = await this.#upstreamModels(provider);
        if (listed.length > 0 && !listed.includes(id)) continue;
      }
      return c.json({ id, object: "model", created: 0, owned_by: provider.name });
    }
    throw new ProxyError("model_not_found", `The model '${id}' does not exist or no configured provider serves it`, {
      param: "model",
    });
  }

  async #upstreamModels(provider: ProviderRuntime): Promise<string[]> {
    const cached = this.#cache.get(provider.name);
    if (cached && Date.now() - cached.at < CACHE_MS) return cached.ids;
    try {
      const response = await fetch(provider.modelsUrl, {
        headers: provider.config.api_key ? { authorization: `Bearer ${provider.config.api_key}` } : {},
        signal: AbortSignal.timeout(provider.timeouts.first_byte_ms),
      });
      if (!response.ok) throw new Error(`status ${response.status}`);
      const body = (await response.json()) as { data?: { id?: unknown }[] };
      const ids = (body.data ?? []).map((m) => m.id).filter((id): id is string => typeof id === "string");
      this.#cache.set(provider.name, { at: Date.now(), ids });
      return ids;
    } catch (error) {
      this.logger.warn("proxy.models_unavailable", { provider: provider.name, error });
      return [];
    }
  }
}
