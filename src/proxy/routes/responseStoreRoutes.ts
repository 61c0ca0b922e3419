import type { Context } from "hono";
import type { ProxyCore } from "../state/proxyCore.ts";
import { invalidRequest, ProxyError } from "../upstream/proxyError.ts";

type Json = Record<string, unknown>;

/**
 * The stored-response routes, answered from agentd's response store: GET and DELETE
 * /v1/responses/:id, GET /v1/responses/:id/input_items, POST /v1/responses/:id/cancel.
 */

function notFound(id: string): ProxyError {
  return new ProxyError("response_not_found", `Response with id '${id}' not found (or it has expired)`, {
    param: "response_id",
  });
}

function stored(c: Context, core: ProxyCore) {
  const id = c.req.param("id") ?? "";
  const found = core.responses.load(id);
  if (!found) throw notFound(id);
  return { id, ...found };
}

export function handleGetResponse(c: Context, core: ProxyCore): Response {
  return c.json(stored(c, core).response);
}

/** As OpenAI answers it: the id, `response.deleted`, `deleted: true`. */
export function handleDeleteResponse(c: Context, core: ProxyCore): Response {
  const id = c.req.param("id") ?? "";
  if (!core.responses.delete(id)) throw notFound(id);
  return c.json({ id, object: "response.deleted", deleted: true });
}

/**
 * agentd never runs a response in the background (`background: true` is refused or left to a
 * Responses upstream, which keeps its own), so every stored response was synchronous; OpenAI
 * refuses to cancel those with a 400.
 */
export function handleCancelResponse(c: Context, core: ProxyCore): Response {
  stored(c, core);
  throw new ProxyError(
    "response_not_cancellable",
    "Cannot cancel a synchronous response: only responses created with background=true can be cancelled",
  );
}

/** The items the response was generated from (earlier turns included), as an OpenAI list page. */
export function handleInputItems(c: Context, core: ProxyCore): Response {
  const { id, history } = stored(c, core);
  const order = c.req.query("order") ?? "desc";
  if (order !== "asc" && order !== "desc") throw invalidRequest("'order' must be 'asc' or 'desc'", "order");
  const limitText = c.req.query("limit") ?? "20";
  const limit = Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalidRequest("'limit' must be an integer from 1 to 100", "limit");
  let items = history.map((item, index) => listedItem(item as Json, index, id));
  if (order === "desc") items.reverse();
  const after = c.req.query("after");
  if (after !== undefined) {
    const at = items.findIndex((item) => item.id === after);
    if (at < 0) throw invalidRequest(`No item with id '${after}' in this response's input`, "after");
    items = items.slice(at + 1);
  }
  const data = items.slice(0, limit);
  return c.json({
    object: "list",
    data,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
    has_more: items.length > limit,
  });
}

/** An input item as OpenAI lists it: typed, with an id, message text as content parts. */
function listedItem(item: Json, index: number, responseId: string): Json & { id: string } {
  const id =
    typeof item.id === "string" && item.id ? item.id : `${item.type === "function_call_output" ? "fco" : "msg"}_${index}_${responseId}`;
  if (item.type !== undefined && item.type !== "message") return { ...item, id };
  const role = String(item.role ?? "user");
  const content =
    typeof item.content === "string" ? [{ type: role === "assistant" ? "output_text" : "input_text", text: item.content }] : item.content;
  return { ...item, type: "message", id, role, content, status: item.status ?? "completed" };
}
