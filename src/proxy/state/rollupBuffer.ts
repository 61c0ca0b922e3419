import type { Database } from "bun:sqlite";
import { mapEntry, newMap } from "../../core/collections/index.ts";

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
 * the request path never touches the store. The current minute's rows are found by provider, then
 * model: no key string is built per request.
 */
export class RollupBuffer {
  #rows: Rollup[] = [];
  #minute = Number.NaN;
  #current = new Map<string, Map<string, Rollup>>();

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
    if (minute !== this.#minute) {
      this.#minute = minute;
      this.#current = new Map();
    }
    const byModel = mapEntry(this.#current, provider, newMap<string, Rollup>);
    let row = byModel.get(model);
    if (!row) {
      row = { minute, provider, model, requests: 0, errors: 0, ttft_ms_sum: 0, total_ms_sum: 0, tokens_in: 0, tokens_out: 0 };
      byModel.set(model, row);
      this.#rows.push(row);
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
    if (this.#rows.length === 0) return 0;
    const rows = this.#rows;
    this.#rows = [];
    this.#current = new Map();
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
