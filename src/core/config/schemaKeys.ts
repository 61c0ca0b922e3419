import type { z } from "zod";

type Def = { type: string; innerType?: z.ZodType; element?: z.ZodType; shape?: Record<string, z.ZodType> };

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
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
    const def: Def = defOf(current);
    if (def.type === "object" && def.shape) current = def.shape[String(segment)];
    else if (def.type === "array" && def.element) current = def.element;
    else return [];
    if (!current) return [];
    current = unwrap(current);
  }
  const def = defOf(current);
  return def.type === "object" && def.shape ? Object.keys(def.shape) : [];
}
