export { openStore, probeStoreWritable } from "./database.ts";
export type { OpenStoreOptions } from "./database.ts";
export { StoreCorruptError, StoreError } from "./storeErrors.ts";
export { checkStoreIntegrity } from "./integrity.ts";
export { applyMigrations } from "./migrations.ts";
export type { Migration } from "./migrations.ts";
export { baseMigrations } from "./baseMigrations.ts";
export { recordEvent } from "./events.ts";
export type { Database } from "bun:sqlite";
