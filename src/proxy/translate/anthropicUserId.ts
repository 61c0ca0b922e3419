import { createHash } from "node:crypto";

/** OpenAI refuses a longer `user`, `safety_identifier` or `prompt_cache_key` with a 400. */
export const OPENAI_ID_MAX = 64;

export interface OpenAiIdentifiers {
  /** `user`: the client's id when it fits, else a stable digest of the part that names the person. */
  user: string;
  /** `prompt_cache_key`: the session the id names, so one conversation's turns share a cache. */
  promptCacheKey?: string;
  /** The id did not fit and was replaced by a digest (reported as `metadata.user_id`). */
  reshaped: boolean;
}

/**
 * OpenAI's identifiers from an Anthropic `metadata.user_id`. Claude Code sends a JSON string
 * (`{"device_id","account_uuid","session_id"}`, ~150 characters) or, in older versions,
 * `user_<hash>_account_<uuid>_session_<uuid>`: too long for OpenAI's 64-character `user`. The
 * digest leaves the session out, so one person keeps one `user` across sessions.
 */
export function openAiIdentifiers(userId: string): OpenAiIdentifiers {
  const { stable, session } = splitSession(userId);
  const promptCacheKey = session && session.length <= OPENAI_ID_MAX ? session : undefined;
  if (userId.length <= OPENAI_ID_MAX) return { user: userId, promptCacheKey, reshaped: false };
  return { user: createHash("sha256").update(stable).digest("base64url"), promptCacheKey, reshaped: true };
}

function splitSession(userId: string): { stable: string; session?: string } {
  const json = parseObject(userId);
  if (json) {
    const { session_id: session, ...rest } = json;
    return { stable: JSON.stringify(rest), session: typeof session === "string" && session ? session : undefined };
  }
  const legacy = /^(.+)_session_([A-Za-z0-9-]+)$/.exec(userId);
  return legacy ? { stable: legacy[1]!, session: legacy[2]! } : { stable: userId };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
