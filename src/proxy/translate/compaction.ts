import { newId } from "./responseObject.ts";

/**
 * Compaction for upstreams without it. A Responses client (Codex's built-in provider) asks for a
 * compaction by ending its input with `{"type": "compaction_trigger"}` and gets back one
 * `compaction` item, opaque to it, that stands for the conversation from then on. OpenAI's item
 * holds the conversation encrypted; agentd's holds a summary the chat model wrote, marked as
 * agentd's, and becomes that summary again when a later request sends it to a chat model.
 */

type Json = Record<string, unknown>;

const MARK = "agentd-compaction-v1:";

const PROMPT = [
  "Compact this conversation now: it is about to be replaced by your summary, which is all another",
  "model will have to continue the task. Write the summary only, no tool calls. Include the user's",
  "goal and constraints, what has been done and found (files, commands, results, decisions), what is",
  "still open, and the exact next steps.",
].join(" ");

const SUMMARY_PREFIX =
  "This conversation was compacted. A model that worked on it earlier wrote this summary of it; continue from here:\n\n";

function isTrigger(item: unknown): boolean {
  return typeof item === "object" && item !== null && (item as Json).type === "compaction_trigger";
}

/** Whether a request's input asks for a compaction (its last item is the trigger). */
export function asksForCompaction(input: unknown): boolean {
  return Array.isArray(input) && isTrigger(input.at(-1));
}

/**
 * The input a chat model compacts from: the conversation without the trigger, then the request
 * for the summary, as a user turn (any model follows one).
 */
export function compactionInput(input: readonly unknown[]): unknown[] {
  return [...input.filter((item) => !isTrigger(item)), { type: "message", role: "user", content: PROMPT }];
}

/** The item a compaction answers with. */
export function compactionItem(summary: string): Json {
  return { type: "compaction", id: newId("cmp"), encrypted_content: MARK + Buffer.from(summary, "utf8").toString("base64") };
}

/** The summary in a compaction item agentd wrote; undefined for another server's (opaque) one. */
export function compactionSummary(item: Json): string | undefined {
  const content = item.encrypted_content;
  if (typeof content !== "string" || !content.startsWith(MARK)) return undefined;
  return Buffer.from(content.slice(MARK.length), "base64").toString("utf8");
}

/** A compaction item as what a chat model reads in its place. */
export function compactionMessage(summary: string): { role: string; content: string } {
  return { role: "user", content: SUMMARY_PREFIX + summary };
}
