import type { Migration } from "../core/store/index.ts";

export const proxyMigrations: Migration[] = [
  {
    version: 100,
    name: "proxy",
    sql: `
      CREATE TABLE proxy_responses (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        model TEXT NOT NULL,
        history TEXT NOT NULL,
        response TEXT NOT NULL
      );
      CREATE INDEX proxy_responses_expires ON proxy_responses (expires_at);
      CREATE TABLE proxy_quirks (
        provider TEXT NOT NULL,
        param TEXT NOT NULL,
        learned_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (provider, param)
      );
      CREATE TABLE proxy_rollups (
        minute INTEGER NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        requests INTEGER NOT NULL DEFAULT 0,
        errors INTEGER NOT NULL DEFAULT 0,
        ttft_ms_sum REAL NOT NULL DEFAULT 0,
        total_ms_sum REAL NOT NULL DEFAULT 0,
        tokens_in INTEGER NOT NULL DEFAULT 0,
        tokens_out INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (minute, provider, model)
      );
    `,
  },
  {
    version: 101,
    name: "proxy_response_items",
    // Output items by id, so an `item_reference` input resolves with one read.
    sql: `
      CREATE TABLE proxy_response_items (
        id TEXT PRIMARY KEY,
        response_id TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        item TEXT NOT NULL
      );
      CREATE INDEX proxy_response_items_response ON proxy_response_items (response_id);
      CREATE INDEX proxy_response_items_expires ON proxy_response_items (expires_at);
    `,
  },
];
