import type { Database } from "bun:sqlite";

type Json = Record<string, unknown>;

export interface StoredResponse {
  /** The input items that led to this response (earlier turns included). */
  history: unknown[];
  response: Json;
}

/**
 * Responses kept for `previous_response_id` (and GET /v1/responses/:id), each for a TTL. The
 * history is stored whole so a continuation needs one read, not a walk up the chain.
 */
export class ResponseStore {
  readonly #insert;
  readonly #select;

  constructor(
    private readonly db: Database,
    private readonly ttlMs: number,
  ) {
    this.#insert = db.query(
      "INSERT OR REPLACE INTO proxy_responses (id, created_at, expires_at, model, history, response) VALUES ($id, $now, $expires, $model, $history, $response)",
    );
    this.#select = db.query<{ history: string; response: string }, { id: string; now: number }>(
      "SELECT history, response FROM proxy_responses WHERE id = $id AND expires_at > $now",
    );
  }

  save(history: readonly unknown[], response: Json, now = Date.now()): void {
    this.#insert.run({
      id: String(response.id),
      now,
      expires: now + this.ttlMs,
      model: String(response.model ?? ""),
      history: JSON.stringify(history),
      response: JSON.stringify(response),
    });
  }

  load(id: string, now = Date.now()): StoredResponse | undefined {
    const row = this.#select.get({ id, now });
    if (!row) return undefined;
    return { history: JSON.parse(row.history) as unknown[], response: JSON.parse(row.response) as Json };
  }

  /** The input items that continue after `id`: its history, then its output. */
  conversation(id: string): unknown[] | undefined {
    const stored = this.load(id);
    if (!stored) return undefined;
    return [...stored.history, ...((stored.response.output as unknown[] | undefined) ?? [])];
  }

  purgeExpired(now = Date.now()): number {
    return this.db.run("DELETE FROM proxy_responses WHERE expires_at <= ?", [now]).changes;
  }
}
