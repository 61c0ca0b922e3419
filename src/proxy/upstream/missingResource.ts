import { upstreamErrorMessage } from "./upstreamAttempt.ts";

export interface MissingResource {
  /** What is missing, in the upstream's words: "item", "previous response", "file", … */
  kind: string;
  id: string;
  /** The upstream's message. */
  message: string;
}

/** OpenAI's "Item with id 'rs_…' not found.", "Previous response with id 'resp_…' not found." and the like. */
const WITH_ID = /\b(item|previous response|response|file|conversation|vector store|container|upload|batch)s? with id '([^']+)' not found/i;
/** OpenAI's "No such File object: file-…". */
const NO_SUCH = /\bno such ([a-z ]+?) object: ([\w.-]+)/i;

/**
 * The item, file or response an upstream's 404 says it lacks; undefined for any other 404 (an
 * unknown model or endpoint), so a missing id is not mistaken for a missing model.
 */
export function missingResource(body: string | undefined): MissingResource | undefined {
  if (!body) return undefined;
  const message = upstreamErrorMessage(body);
  if (/model_not_found/.test(body)) return undefined;
  const match = WITH_ID.exec(message) ?? NO_SUCH.exec(message);
  if (!match) return undefined;
  return { kind: match[1]!.toLowerCase(), id: match[2]!, message };
}
