import type { z } from "zod";

/** The parts of zod's definition of a schema that agentd reads (keys for did-you-mean, the reference table). */
export interface SchemaDef {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  defaultValue?: unknown;
  entries?: Record<string, string | number>;
  values?: readonly unknown[];
  options?: readonly z.ZodType[];
  valueType?: z.ZodType;
  in?: z.ZodType;
}

export function defOf(schema: z.ZodType): SchemaDef {
  return (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let def = defOf(current); def.innerType; def = defOf(current)) current = def.innerType;
  return current;
}

/** The property names the schema allows at `path` (for did-you-mean on unknown keys). */
export function schemaKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let current: z.ZodType | undefined = unwrap(schema);
  for (const segment of path) {
    const def: SchemaDef = defOf(current);
    if (def.type === "object" && def.shape) current = def.shape[String(segment)];
    else if (def.type === "array" && def.element) current = def.element;
    else return [];
    if (!current) return [];
    current = unwrap(current);
  }
  const def = defOf(current);
  return def.type === "object" && def.shape ? Object.keys(def.shape) : [];
}
