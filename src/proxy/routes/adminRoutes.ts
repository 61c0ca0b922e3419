import { Hono } from "hono";
import { z } from "zod";
import type { Logger } from "../../core/log/index.ts";
import { readValidatedBody } from "../../http/requestBody.ts";
import type { ProxyCore } from "../state/proxyCore.ts";
import { ProxyError } from "../upstream/proxyError.ts";
import { providerStatus } from "../upstream/providerStatus.ts";
import { clearQuirks, listQuirks } from "../upstream/quirkStore.ts";
import type { AttemptTimeouts } from "../upstream/upstreamAttempt.ts";

const openSchema = z.strictObject({ cooldown_ms: z.number().int().positive().optional(), reason: z.string().max(500).optional() });
const modelSwitchSchema = z.strictObject({ duration_ms: z.number().int().positive(), reason: z.string().max(500).optional() });
const timeoutsSchema = z.strictObject({
  connect_ms: z.number().int().positive().optional(),
  first_byte_ms: z.number().int().positive().optional(),
  idle_ms: z.number().int().positive().optional(),
  total_ms: z.number().int().positive().optional(),
  reason: z.string().max(500).optional(),
});

/**
 * What the watchdog may do to the proxy (mounted behind a loopback-only guard by the lead):
 * open or close a provider's breaker, switch it away for one model, raise its timeouts within
 * bounds, list or clear quirks.
 */
export function createAdminRoutes(core: ProxyCore, logger: Logger): Hono {
  const app = new Hono();
  const providerOr404 = (name: string) => {
    const provider = core.provider(name);
    if (!provider) throw new ProxyError("provider_not_found", `No provider is named '${name}'`);
    return provider;
  };

  app.get("/providers", (c) => c.json({ providers: core.providers.map(providerStatus) }));

  app.post("/providers/:name/breaker/open", async (c) => {
    const provider = providerOr404(c.req.param("name"));
    const body = await readValidatedBody(c.req.raw, openSchema);
    const applied = provider.breaker.forceOpen(body.cooldown_ms ?? core.config.breaker.cooldown_5xx_ms);
    logger.warn("proxy.admin", { action: "breaker_open", provider: provider.name, cooldown_ms: applied, reason: body.reason });
    return c.json(providerStatus(provider));
  });

  // One model's requests go to the other providers first for a while; the provider's other models are untouched.
  app.post("/providers/:name/models/:model/switch", async (c) => {
    const provider = providerOr404(c.req.param("name"));
    const model = c.req.param("model");
    const body = await readValidatedBody(c.req.raw, modelSwitchSchema);
    const until = core.modelSwitches.switchAway(provider.name, model, body.duration_ms, Date.now());
    logger.warn("proxy.admin", { action: "model_switch", provider: provider.name, model, until, reason: body.reason });
    return c.json({ provider: provider.name, model, until });
  });

  app.post("/providers/:name/breaker/close", (c) => {
    const provider = providerOr404(c.req.param("name"));
    provider.breaker.forceClose();
    provider.authFailed = false;
    logger.warn("proxy.admin", { action: "breaker_close", provider: provider.name });
    return c.json(providerStatus(provider));
  });

  app.post("/providers/:name/timeouts", async (c) => {
    const provider = providerOr404(c.req.param("name"));
    const { reason, ...wanted } = await readValidatedBody(c.req.raw, timeoutsSchema);
    const factor = core.config.timeout_raise_max_factor;
    const applied: Partial<AttemptTimeouts> = {};
    for (const key of Object.keys(wanted) as (keyof AttemptTimeouts)[]) {
      const configured = provider.config.timeouts[key];
      // Only raises: never below the configured value, never past factor × configured.
      applied[key] = Math.min(Math.max(wanted[key]!, configured), configured * factor);
      provider.timeouts[key] = applied[key]!;
    }
    logger.warn("proxy.admin", { action: "timeouts_raise", provider: provider.name, applied, reason });
    return c.json({ provider: provider.name, applied, timeouts: { ...provider.timeouts } });
  });

  app.get("/quirks", (c) => c.json({ quirks: listQuirks(core.db) }));

  app.delete("/quirks", (c) => {
    const name = c.req.query("provider");
    const cleared = clearQuirks(core.db, name);
    for (const provider of core.providers) if (name === undefined || provider.name === name) provider.quirks.clear();
    logger.warn("proxy.admin", { action: "quirks_clear", provider: name ?? "*", cleared });
    return c.json({ cleared });
  });

  return app;
}
