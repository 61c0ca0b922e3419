import type { Database } from "bun:sqlite";

type Json = Record<string, unknown>;

export interface StoredResponse {
  /** The input items that led to this response (earlier turns included). */
  history: unknown[];
  response: Json;
}

/**
 * Responses kept for `previous_response_id`, `item_reference` and the /v1/responses/:id routes,
 * each for a TTL. The history is stored whole so a continuation needs one read, not a walk up the
 * chain; output items are also kept by id.
 */
export class ResponseStore {
  readonly #insert;
  readonly #insertItem;
  readonly #select;
  readonly #selectItem;
  readonly #save;

  constructor(
    private readonly db: Database,
    private readonly ttlMs: number,
  ) {
    this.#insert = db.query(
      "INSERT OR REPLACE INTO proxy_responses (id, created_at, expires_at, model, history, response) VALUES ($id, $now, $expires, $model, $history, $response)",
    );
    this.#insertItem = db.query(
      "INSERT OR REPLACE INTO proxy_response_items (id, response_id, expires_at, item) VALUES ($id, $response, $expires, $item)",
    );
    this.#select = db.query<{ history: string; response: string }, { id: string; now: number }>(
      "SELECT history, response FROM proxy_responses WHERE id = $id AND expires_at > $now",
    );
    this.#selectItem = db.query<{ item: string }, { id: string; now: number }>(
      "SELECT item FROM proxy_response_items WHERE id = $id AND expires_at > $now",
    );
    this.#save = db.transaction((history: readonly unknown[], response: Json, now: number) => {
      const id = String(response.id);
      const expires = now + this.ttlMs;
      this.#insert.run({
        id,
        now,
        expires,
        model: String(response.model ?? ""),
        history: JSON.stringify(history),
        response: JSON.stringify(response),
      });
      for (const item of (response.output as Json[] | undefined) ?? []) {
        if (typeof item?.id === "string" && item.id)
          this.#insertItem.run({ id: item.id, response: id, expires, item: JSON.stringify(item) });
      }
    });
  }

  save(history: readonly unknown[], response: Json, now = Date.now()): void {
    this.#save(history, response, now);
  }

  load(id: string, now = Date.now()): StoredResponse | undefined {
    const row = this.#select.get({ id, now });
    if (!row) return undefined;
    return { history: JSON.parse(row.history) as unknown[], response: JSON.parse(row.response) as Json };
  }

  /** An output item of a stored response, by its id. */
  item(id: string, now = Date.now()): Json | undefined {
    const row = this.#selectItem.get({ id, now });
    return row ? (JSON.parse(row.item) as Json) : undefined;
  }

  /** Forgets a response and its items; false when there was none. */
  delete(id: string, now = Date.now()): boolean {
    const found = this.db.run("DELETE FROM proxy_responses WHERE id = ? AND expires_at > ?", [id, now]).changes > 0;
    this.db.run("DELETE FROM proxy_response_items WHERE response_id = ?", [id]);
    return found;
  }

  /** The input items that continue after `id`: its history, then its output. */
  conversation(id: string): unknown[] | undefined {
    const stored = this.load(id);
    if (!stored) return undefined;
    return [...stored.history, ...((stored.response.output as unknown[] | undefined) ?? [])];
  }

  purgeExpired(now = Date.now()): number {
    this.db.run("DELETE FROM proxy_response_items WHERE expires_at <= ?", [now]);
    return this.db.run("DELETE FROM proxy_responses WHERE expires_at <= ?", [now]).changes;
  }
}
