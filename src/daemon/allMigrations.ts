import { baseMigrations, type Migration } from "../store/index.ts";

/** Every capability's migrations; supervisor and worker open the store with the same list. */
export const allMigrations: readonly Migration[] = [...baseMigrations];
