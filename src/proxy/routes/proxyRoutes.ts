import { Hono, type Context } from "hono";
import type { HotRoutes } from "../../core/capability.ts";
import type { Logger } from "../../core/log/index.ts";
import { createErrorHandler } from "../../http/errorResponse.ts";
import { handleChatCompletions } from "./chatCompletionsRoute.ts";
import { ClientGoneError } from "../upstream/clientGone.ts";
import { ModelCatalog } from "./modelsRoute.ts";
import type { ProxyCore } from "../state/proxyCore.ts";
import { NO_PROVIDER_MESSAGE, ProxyError } from "../upstream/proxyError.ts";
import { handleResponses } from "./responsesRoute.ts";
import { upgradeResponses } from "./responsesSocket.ts";
import { messagesErrorHandler } from "./messagesErrors.ts";
import { handleCountTokens, handleMessages } from "./messagesRoute.ts";
import { handleCompact, handleInputTokens } from "./responsesUtilityRoutes.ts";
import { COMPLETIONS, EMBEDDINGS, handlePassthrough } from "./passthroughRoute.ts";
import { handleCancelResponse, handleDeleteResponse, handleGetResponse, handleInputItems } from "./responseStoreRoutes.ts";

/** The OpenAI-compatible surface, mounted at /v1; its static POST routes (every model call) also as hot routes (hotRoutes.ts). */
export function createProxyRoutes(core: ProxyCore, logger: Logger): { app: Hono; hot: HotRoutes } {
  const app = new Hono();
  const onError = proxyErrorHandler(logger);
  // No middleware: each is one more async step per request. The provider check is a guard in each
  // route, the body limit is enforced where the body is read (requestBody.ts). Errors are answered
  // by the guard too, not by app.onError: Hono runs a sub-app's error handler as one more composed
  // step on every request.
  const guarded =
    (answerError: (error: Error, c: Context) => Response | Promise<Response>) =>
    <T>(handler: (c: Context) => T) =>
    async (c: Context): Promise<Awaited<T> | Response> => {
      try {
        if (core.providers.length === 0) throw new ProxyError("no_provider", NO_PROVIDER_MESSAGE);
        return await handler(c);
      } catch (error) {
        return answerError(error as Error, c);
      }
    };
  const guard = guarded(onError);
  // Anthropic's clients read Anthropic's error shape.
  const anthropic = guarded(messagesErrorHandler(onError));
  const catalog = new ModelCatalog(core.providers, logger);
  const hot = new Map<string, (c: Context) => Promise<Response>>();
  const post = (path: string, handler: (c: Context) => Promise<Response>) => {
    app.post(path, handler);
    hot.set(`POST ${path}`, handler);
  };
  post(
    "/messages",
    anthropic((c) => handleMessages(c, core)),
  );
  post(
    "/messages/count_tokens",
    anthropic((c) => handleCountTokens(c, core)),
  );
  post(
    "/chat/completions",
    guard((c) => handleChatCompletions(c, core)),
  );
  post(
    "/responses",
    guard((c) => handleResponses(c, core)),
  );
  app.get(
    "/responses",
    guard((c) => upgradeResponses(c, core, app, logger)),
  );
  post(
    "/responses/input_tokens",
    guard((c) => handleInputTokens(c, core)),
  );
  post(
    "/responses/compact",
    guard((c) => handleCompact(c, core)),
  );
  app.get(
    "/responses/:id",
    guard((c) => handleGetResponse(c, core)),
  );
  app.delete(
    "/responses/:id",
    guard((c) => handleDeleteResponse(c, core)),
  );
  app.get(
    "/responses/:id/input_items",
    guard((c) => handleInputItems(c, core)),
  );
  app.post(
    "/responses/:id/cancel",
    guard((c) => handleCancelResponse(c, core)),
  );
  post(
    "/embeddings",
    guard((c) => handlePassthrough(c, core, EMBEDDINGS)),
  );
  post(
    "/completions",
    guard((c) => handlePassthrough(c, core, COMPLETIONS)),
  );
  app.get(
    "/models",
    guard((c) => catalog.handle(c)),
  );
  app.get(
    "/models/:id{.+}",
    guard((c) => catalog.retrieve(c)),
  );
  return { app, hot };
}

/**
 * The one error shape (OpenAI's), with the headers OpenAI's clients read: `x-request-id` on every
 * error, `Retry-After` where waiting helps, `x-should-retry: false` where it cannot (the openai SDK
 * then stops at once), and `x-agentd-provider` once a provider was tried. A gone client gets no body.
 */
export function proxyErrorHandler(logger: Logger) {
  const fallback = createErrorHandler(logger);
  return (error: Error, c: Context): Response => {
    if (error instanceof ClientGoneError) return new Response(null, { status: 499 });
    const response = fallback(error, c);
    const requestId = `req_${crypto.randomUUID().replaceAll("-", "")}`;
    response.headers.set("x-request-id", requestId);
    if (error instanceof ProxyError) {
      if (error.retryAfterS !== undefined) response.headers.set("retry-after", String(error.retryAfterS));
      if (error.provider) response.headers.set("x-agentd-provider", error.provider);
      if (!mayHeal(error)) response.headers.set("x-should-retry", "false");
      logger.debug("proxy.error", { request_id: requestId, status: response.status, code: error.code, provider: error.provider });
    }
    return response;
  };
}

/** Whether the same request may succeed later; a rejected key or a refused request fails again however often it is sent. */
function mayHeal(error: ProxyError): boolean {
  if (error.code === "upstream_auth_failed" || error.waitTooLong) return false;
  return error.status >= 500 || error.status === 408 || error.status === 409 || error.status === 429;
}
