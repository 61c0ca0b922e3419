type Json = Record<string, unknown>;

/**
 * The signature on thinking blocks agentd writes from another model's reasoning. Claude Code sends
 * thinking blocks back with their signature on the next turn; this one marks them as agentd's, so
 * they are accepted (and left out) rather than sent to an Anthropic upstream that would refuse them.
 */
export const AGENTD_SIGNATURE = "agentd-reasoning-v1";

export function isAgentdSignature(signature: unknown): boolean {
  return signature === AGENTD_SIGNATURE;
}

/** The request without agentd's own thinking blocks; the same object when it has none. */
export function withoutAgentdThinking(request: Json): Json {
  const messages = request.messages;
  if (!Array.isArray(messages)) return request;
  const ours = (block: Json) => block.type === "thinking" && isAgentdSignature(block.signature);
  const has = (messages as Json[]).some((m) => Array.isArray(m.content) && (m.content as Json[]).some(ours));
  if (!has) return request;
  return {
    ...request,
    messages: (messages as Json[]).map((m) =>
      Array.isArray(m.content) ? { ...m, content: (m.content as Json[]).filter((b) => !ours(b)) } : m,
    ),
  };
}
