import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Logger } from "../log/index.ts";
import { createErrorHandler, errorBody } from "../web/errorResponse.ts";
import { handleChatCompletions } from "./chatCompletionsRoute.ts";
import { ClientGoneError } from "./clientGone.ts";
import { ModelCatalog } from "./modelsRoute.ts";
import type { ProxyCore } from "./proxyCore.ts";
import { NO_PROVIDER_MESSAGE, ProxyError } from "./proxyError.ts";
import { handleGetResponse, handleResponses } from "./responsesRoute.ts";

/** The OpenAI-compatible surface, mounted at /v1. */
export function createProxyRoutes(core: ProxyCore, logger: Logger): Hono {
  const app = new Hono();
  app.onError(proxyErrorHandler(logger));
  app.use(async (c, next) => {
    if (core.providers.length === 0) return c.json(errorBody("no_provider", NO_PROVIDER_MESSAGE), 503);
    await next();
  });
  app.use(
    bodyLimit({
      maxSize: core.config.max_body_bytes,
      onError: (c) => c.json(errorBody("body_too_large", `The request body exceeds ${core.config.max_body_bytes} bytes`), 413),
    }),
  );
  const catalog = new ModelCatalog(core.providers, logger);
  app.post("/chat/completions", (c) => handleChatCompletions(c, core));
  app.post("/responses", (c) => handleResponses(c, core));
  app.get("/responses/:id", (c) => handleGetResponse(c, core));
  app.get("/models", (c) => catalog.handle(c));
  return app;
}

/** OpenAI's error shape, with `param` for 400s about one field; a gone client gets no body. */
export function proxyErrorHandler(logger: Logger) {
  const fallback = createErrorHandler(logger);
  return (error: Error, c: Context): Response => {
    if (error instanceof ClientGoneError) return new Response(null, { status: 499 });
    if (error instanceof ProxyError) {
      const body = errorBody(error.code, error.message, error.details);
      if (error.param !== undefined) body.error.param = error.param;
      return c.json(body, error.status as ContentfulStatusCode);
    }
    return fallback(error, c);
  };
}
