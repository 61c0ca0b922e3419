type Json = Record<string, unknown>;
type Counter = (text: string) => number;

/**
 * Counts the input tokens of a chat request with the o200k_base encoding (OpenAI's current models):
 * each message's text plus the chat format's framing (3 per message, 3 to prime the answer), and
 * the tool definitions as JSON. Where the provider's model has another tokenizer this is an estimate.
 * Only this one encoding is imported, so the binary carries one table; it loads at first use.
 */
export async function countChatInputTokens(chat: Json): Promise<number> {
  const count = await counter();
  let total = 3;
  for (const message of (chat.messages as Json[] | undefined) ?? []) {
    total += 3 + count(String(message.role ?? ""));
    total += countContent(message.content, count);
    if (typeof message.name === "string") total += 1 + count(message.name);
    for (const call of (message.tool_calls as Json[] | undefined) ?? []) {
      const fn = call.function as Json | undefined;
      total += 3 + count(String(fn?.name ?? "")) + count(String(fn?.arguments ?? ""));
    }
  }
  const tools = chat.tools as unknown[] | undefined;
  if (tools && tools.length > 0) total += count(JSON.stringify(tools));
  return total;
}

/** A fixed charge per image part: its real cost depends on its size, which is not known here. */
const IMAGE_TOKENS = 85;

function countContent(content: unknown, count: Counter): number {
  if (typeof content === "string") return count(content);
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const part of content as Json[]) {
    if (typeof part.text === "string") total += count(part.text);
    else if (part.type === "image_url") total += IMAGE_TOKENS;
  }
  return total;
}

let loaded: Promise<Counter> | undefined;

function counter(): Promise<Counter> {
  loaded ??= import("gpt-tokenizer/encoding/o200k_base").then((encoding) => (text: string) => encoding.countTokens(text));
  return loaded;
}
