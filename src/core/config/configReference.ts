import type { z } from "zod";
import { defOf } from "./schemaKeys.ts";

/**
 * Every key the config schema accepts, with its type and default, as docs/configuration.md's
 * reference table: generated from the schema itself so the table cannot drift from it
 * (tests/core/config/configReference.test.ts compares the two). Pure: reads zod's definitions.
 */
export interface ConfigKey {
  /** Dotted path; `[]` stands for any element of a list, `{}` for any name in a map. */
  key: string;
  type: string;
  default?: string;
}

/** Wrappers that add no key of their own: a default (noted), optional, nullable, a pipe's input. */
function peel(schema: z.ZodType): { schema: z.ZodType; default?: unknown } {
  let current = schema;
  let fallback: unknown;
  for (;;) {
    const def = defOf(current);
    if ((def.type === "default" || def.type === "prefault") && def.innerType) {
      if (fallback === undefined) fallback = def.defaultValue;
      current = def.innerType;
    } else if ((def.type === "optional" || def.type === "nullable" || def.type === "readonly" || def.type === "catch") && def.innerType)
      current = def.innerType;
    else if (def.type === "pipe" && def.in) current = def.in;
    else return fallback === undefined ? { schema: current } : { schema: current, default: fallback };
  }
}

function typeName(schema: z.ZodType): string {
  const def = defOf(schema);
  switch (def.type) {
    case "enum":
      return oneOf(Object.values(def.entries ?? {}));
    case "literal":
      return (def.values ?? []).map((v) => JSON.stringify(v)).join(" \\| ");
    case "union":
      return [...new Set((def.options ?? []).map((option) => typeName(peel(option).schema)))].join(" \\| ");
    case "array":
      return `list of ${def.element ? typeName(peel(def.element).schema) : "values"}`;
    case "record":
      return `map of ${def.valueType ? typeName(peel(def.valueType).schema) : "values"}`;
    default:
      return def.type;
  }
}

/** A long list of names is cut to its first few and a count: the table stays readable. */
function oneOf(values: readonly unknown[]): string {
  const names = values.map((v) => JSON.stringify(v));
  return names.length > 6 ? `${names.slice(0, 4).join(" \\| ")} \\| … (${names.length} names)` : names.join(" \\| ");
}

const LONGEST_DEFAULT = 60;

function shown(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  // An object default is its keys' defaults, listed on their own rows.
  if (text === "{}") return undefined;
  return text.length > LONGEST_DEFAULT ? `${text.slice(0, LONGEST_DEFAULT - 1)}…` : text;
}

/** The rows for `schema` at `prefix`, depth first in the schema's own order. */
export function configKeys(schema: z.ZodType, prefix = ""): ConfigKey[] {
  const peeled = peel(schema);
  const def = defOf(peeled.schema);
  const row: ConfigKey = { key: prefix, type: typeName(peeled.schema) };
  const fallback = shown(peeled.default);
  if (fallback !== undefined) row.default = fallback;
  if (def.type === "object" && def.shape) {
    const rows = prefix && fallback !== undefined ? [row] : [];
    for (const [name, child] of Object.entries(def.shape)) rows.push(...configKeys(child, prefix ? `${prefix}.${name}` : name));
    return rows;
  }
  const element = def.type === "array" ? def.element : def.type === "record" ? def.valueType : undefined;
  if (!element) return [row];
  const inner = `${prefix}${def.type === "array" ? "[]" : ".{}"}`;
  const elementDef = defOf(peel(element).schema);
  if (elementDef.type === "object") return [row, ...configKeys(element, inner)];
  if (elementDef.type === "union" && elementDef.options?.every((option) => defOf(peel(option).schema).type === "object"))
    return [row, ...variantKeys(elementDef.options, inner)];
  return [row];
}

/**
 * The keys of a list whose elements take one of several shapes told apart by `type` (the watchdog's
 * checks): a key every shape has once, others with the shapes that have them.
 */
function variantKeys(options: readonly z.ZodType[], prefix: string): ConfigKey[] {
  const byKey = new Map<string, { key: ConfigKey; shapes: string[] }>();
  for (const option of options) {
    const shape = defOf(peel(option).schema).shape ?? {};
    const kind = shape.type ? typeName(peel(shape.type).schema) : "";
    for (const key of configKeys(option, prefix)) {
      const seen = byKey.get(key.key);
      if (seen) seen.shapes.push(kind);
      else byKey.set(key.key, { key, shapes: [kind] });
    }
  }
  return [...byKey.values()].map(({ key, shapes }) => {
    if (key.key === `${prefix}.type`) return { ...key, type: shapes.join(" \\| ") };
    return shapes.length === options.length ? key : { ...key, type: `${key.type} (type ${shapes.join(", ")})` };
  });
}

/** The markdown table of every key. */
export function configReferenceTable(schema: z.ZodType): string {
  const escapePipes = (text: string) => text.replaceAll("|", "\\|");
  const lines = ["| Key | Type | Default |", "|---|---|---|"];
  for (const key of configKeys(schema))
    lines.push(`| \`${key.key}\` | ${key.type} | ${key.default === undefined ? "" : `\`${escapePipes(key.default)}\``} |`);
  return `${lines.join("\n")}\n`;
}
