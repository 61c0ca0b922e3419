import { AgentdError } from "../core/errors/index.ts";

export interface QueryIntOptions {
  name: string;
  min?: number;
  max?: number;
  /** When the parameter is absent or empty. */
  fallback: number;
}

/**
 * A whole-number query parameter within bounds, or 400 `invalid_query` naming it. Bounds are always
 * finite: a number past them (`?limit=99999999999999999999`) would otherwise reach SQLite as a float.
 */
export function queryInt(text: string | undefined, options: QueryIntOptions): number {
  if (text === undefined || text === "") return options.fallback;
  const min = options.min ?? 0;
  const max = options.max ?? Number.MAX_SAFE_INTEGER;
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new AgentdError("invalid_query", `Cannot use "${text}" as ${options.name}: expected a whole number from ${min} to ${max}`, {
      param: options.name,
    });
  return value;
}
