import { resolveItemReferences } from "../translate/itemReferences.ts";
import type { ProxyCore } from "../state/proxyCore.ts";
import { invalidRequest, ProxyError } from "../upstream/proxyError.ts";

/** A Responses request's input with agentd's own ids resolved: what any upstream can be sent. */
export interface ResponsesInput {
  /** The items as the client sent them (a string input becomes one user message). */
  input: unknown[];
  /** The stored conversation `previous_response_id` names; empty without one. */
  earlier: unknown[];
  /** `input` with item references resolved except those to reasoning (a Responses upstream takes them as items). */
  resolved: unknown[];
}

/** Checks `model` and `input`, and resolves previous_response_id and item references from agentd's response store. */
export function readResponsesInput(core: ProxyCore, body: Record<string, unknown>): ResponsesInput & { model: string } {
  const model = body.model;
  if (typeof model !== "string" || !model) throw invalidRequest("'model' is required", "model");
  if (body.input === undefined) throw invalidRequest("'input' is required", "input");
  const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
  if (!Array.isArray(input)) throw invalidRequest("'input' must be a string or an array of items", "input");
  let earlier: unknown[] = [];
  if (typeof body.previous_response_id === "string") {
    const found = core.responses.conversation(body.previous_response_id);
    if (!found)
      throw new ProxyError(
        "previous_response_not_found",
        `Previous response '${body.previous_response_id}' was not found (or has expired)`,
        { param: "previous_response_id" },
      );
    earlier = found;
  }
  return { model, input, earlier, resolved: resolveItemReferences(input, (id) => core.responses.item(id), false) };
}

/** The request for a Responses upstream: unchanged when nothing was resolved, else with the whole conversation inline. */
export function inlineConversation(body: Record<string, unknown>, read: ResponsesInput): Record<string, unknown> | undefined {
  if (read.earlier.length === 0 && read.resolved === read.input) return undefined;
  const { previous_response_id: _resolved, ...rest } = body;
  return { ...rest, input: [...read.earlier, ...read.resolved] };
}

/** All item references resolved, reasoning ones included: what a chat translation reads. */
export function fullyResolved(core: ProxyCore, read: ResponsesInput): unknown[] {
  return resolveItemReferences(read.resolved, (id) => core.responses.item(id), true);
}
