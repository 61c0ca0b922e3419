import type { Database } from "bun:sqlite";

interface Rollup {
  minute: number;
  provider: string;
  model: string;
  requests: number;
  errors: number;
  ttft_ms_sum: number;
  total_ms_sum: number;
  tokens_in: number;
  tokens_out: number;
}

/**
 * Per-minute request rollups, gathered in memory and written in one transaction on a timer, so
 * the request path never touches the store.
 */
export class RollupBuffer {
  #pending = new Map<string, Rollup>();

  add(
    provider: string,
    model: string,
    error: boolean,
    ttftMs: number,
    totalMs: number,
    tokensIn: number,
    tokensOut: number,
    now = Date.now(),
  ): void {
    const minute = Math.floor(now / 60_000) * 60;
    const key = `${minute}\u0000${provider}\u0000${model}`;
    let row = this.#pending.get(key);
    if (!row) {
      row = { minute, provider, model, requests: 0, errors: 0, ttft_ms_sum: 0, total_ms_sum: 0, tokens_in: 0, tokens_out: 0 };
      this.#pending.set(key, row);
    }
    row.requests++;
    if (error) row.errors++;
    row.ttft_ms_sum += ttftMs;
    row.total_ms_sum += totalMs;
    row.tokens_in += tokensIn;
    row.tokens_out += tokensOut;
  }

  /** Adds the pending rows onto the stored ones; returns how many rows were written. */
  flush(db: Database): number {
    if (this.#pending.size === 0) return 0;
    const rows = [...this.#pending.values()];
    this.#pending = new Map();
    const upsert = db.query(
      `INSERT INTO proxy_rollups (minute, provider, model, requests, errors, ttft_ms_sum, total_ms_sum, tokens_in, tokens_out)
       VALUES ($minute, $provider, $model, $requests, $errors, $ttft_ms_sum, $total_ms_sum, $tokens_in, $tokens_out)
       ON CONFLICT (minute, provider, model) DO UPDATE SET
         requests = requests + excluded.requests, errors = errors + excluded.errors,
         ttft_ms_sum = ttft_ms_sum + excluded.ttft_ms_sum, total_ms_sum = total_ms_sum + excluded.total_ms_sum,
         tokens_in = tokens_in + excluded.tokens_in, tokens_out = tokens_out + excluded.tokens_out`,
    );
    db.transaction(() => {
      for (const row of rows) upsert.run({ ...row });
    })();
    return rows.length;
  }
}
