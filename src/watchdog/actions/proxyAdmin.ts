import { AgentdError, errorMessage } from "../../core/errors/index.ts";

export type ProviderTimeout = "connect_ms" | "first_byte_ms" | "idle_ms" | "total_ms";

/** What the watchdog asks of the worker's proxy; the HTTP form calls its loopback admin routes. */
export interface ProxyAdmin {
  openBreaker(provider: string, cooldownMs: number, reason: string): Promise<string>;
  /** Routes new requests away from the provider for a while (failover to the next). */
  switchProvider(provider: string, durationMs: number, reason: string): Promise<string>;
  /** Routes one model's requests to the other providers first for a while; the provider's other models are untouched. */
  switchModel(provider: string, model: string, durationMs: number, reason: string): Promise<string>;
  raiseTimeout(provider: string, timeout: ProviderTimeout, factor: number, maxMs: number, reason: string): Promise<string>;
}

class AdminCallError extends AgentdError {
  constructor(message: string) {
    super("admin_call_failed", message);
  }
}

/**
 * The worker's proxy admin routes (loopback only, see src/proxy/adminRoutes.ts):
 *   GET  /api/admin/proxy/providers                       current state and timeouts
 *   POST /api/admin/proxy/providers/{name}/breaker/open   {cooldown_ms, reason}
 *   POST /api/admin/proxy/providers/{name}/models/{model}/switch   {duration_ms, reason}
 *   POST /api/admin/proxy/providers/{name}/timeouts       {<timeout>: ms, reason}  (the proxy caps raises)
 * Switching provider is opening its breaker for a while: the router then fails over to the next one.
 */
export class HttpProxyAdmin implements ProxyAdmin {
  constructor(
    private readonly baseUrl: () => string | undefined,
    private readonly token: string | undefined,
    private readonly timeoutMs = 5000,
  ) {}

  openBreaker(provider: string, cooldownMs: number, reason: string): Promise<string> {
    return this.#call("POST", `/providers/${encodeURIComponent(provider)}/breaker/open`, { cooldown_ms: cooldownMs, reason }).then(
      (r) => r.summary,
    );
  }

  switchProvider(provider: string, durationMs: number, reason: string): Promise<string> {
    return this.openBreaker(provider, durationMs, reason);
  }

  switchModel(provider: string, model: string, durationMs: number, reason: string): Promise<string> {
    return this.#call("POST", `/providers/${encodeURIComponent(provider)}/models/${encodeURIComponent(model)}/switch`, {
      duration_ms: durationMs,
      reason,
    }).then((r) => r.summary);
  }

  async raiseTimeout(provider: string, timeout: ProviderTimeout, factor: number, maxMs: number, reason: string): Promise<string> {
    const listing = (await this.#call("GET", "/providers")).body as {
      providers?: Array<{ name: string; timeouts?: Record<string, number> }>;
    };
    const current = listing.providers?.find((p) => p.name === provider)?.timeouts?.[timeout];
    if (current === undefined) throw new AdminCallError(`Cannot raise ${timeout} of provider ${provider}: the worker does not list it`);
    const wanted = Math.min(Math.round(current * factor), maxMs);
    return (await this.#call("POST", `/providers/${encodeURIComponent(provider)}/timeouts`, { [timeout]: wanted, reason })).summary;
  }

  async #call(method: "GET" | "POST", route: string, body?: Record<string, unknown>): Promise<{ summary: string; body: unknown }> {
    const base = this.baseUrl();
    if (!base) throw new AdminCallError("the worker is not listening");
    const path = `/api/admin/proxy${route}`;
    let response: Response;
    try {
      response = await fetch(base + path, {
        method,
        headers: { "content-type": "application/json", ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new AdminCallError(`${method} ${path} failed: ${errorMessage(error)}`);
    }
    const text = await response.text();
    if (!response.ok) throw new AdminCallError(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new AdminCallError(`${method} ${path} answered ${response.status} with a body that is not JSON`);
    }
    return { summary: `${method} ${path} → ${response.status}`, body: parsed };
  }
}
