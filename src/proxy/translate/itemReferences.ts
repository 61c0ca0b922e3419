import { ProxyError } from "../upstream/proxyError.ts";

type Json = Record<string, unknown>;

/**
 * Replaces `{type: "item_reference", id}` inputs with the items they name, found by `lookup` (the
 * proxy's response store). An id agentd does not hold is left for the upstream when it may hold it
 * (a Responses upstream that stored its own output), else refused naming it.
 */
export function resolveItemReferences(input: readonly unknown[], lookup: (id: string) => Json | undefined, required: boolean): unknown[] {
  let out: unknown[] | undefined;
  input.forEach((raw, index) => {
    const item = raw as Json;
    if (item?.type !== "item_reference") return;
    const id = item.id;
    const found = typeof id === "string" && id ? lookup(id) : undefined;
    if (!found) {
      if (!required) return;
      throw new ProxyError("item_not_found", `Item with id '${String(id)}' not found (input[${index}] is an item_reference to it)`, {
        param: `input[${index}].id`,
      });
    }
    out ??= [...input];
    out[index] = found;
  });
  return out ?? (input as unknown[]);
}
