/**
 * Repairs of a tool call against the tools the request declared, each one only where exactly one
 * reading fits: the model meant a declared tool and parameter, and nothing else is plausible.
 * Anything less certain passes through as written (an empty required argument too: the tool's
 * own error tells the model what is missing).
 */
import type { ToolSchemas } from "./toolCallFormats/types.ts";

export type RepairKind = "name_prefix" | "name_case" | "double_encoded" | "nested_json" | "param_name";

export interface RepairedCall {
  name: string;
  arguments: string;
  repairs: RepairKind[];
}

type Schema = { type?: unknown; properties?: Record<string, { type?: unknown } | undefined>; required?: unknown };

/** The declared name a call means (`functions.exec_command`, `EXEC_COMMAND`), or undefined when none. */
export function resolveToolName(name: string, tools: ToolSchemas): { name: string; repairs: RepairKind[] } | undefined {
  if (tools.has(name)) return { name, repairs: [] };
  const repairs: RepairKind[] = [];
  let bare = name;
  if (bare.startsWith("functions.")) {
    bare = bare.slice("functions.".length);
    repairs.push("name_prefix");
    if (tools.has(bare)) return { name: bare, repairs };
  }
  const lower = bare.toLowerCase();
  const matches = [...tools.keys()].filter((declared) => declared.toLowerCase() === lower);
  return matches.length === 1 ? { name: matches[0]!, repairs: [...repairs, "name_case"] } : undefined;
}

/**
 * A call with its name resolved and its arguments repaired, or undefined when its name matches no
 * declared tool or its arguments are not a JSON object even after repair.
 */
export function repairCall(call: { name: string; arguments: string }, tools: ToolSchemas): RepairedCall | undefined {
  const resolved = resolveToolName(call.name, tools);
  if (!resolved) return undefined;
  const args = repairArguments(call.arguments, tools.get(resolved.name) ?? {});
  if (!args) return undefined;
  return { name: resolved.name, arguments: args.arguments, repairs: [...resolved.repairs, ...args.repairs] };
}

/** Arguments repaired against one tool's schema; undefined when they are not a JSON object. */
export function repairArguments(text: string, schema: Schema): { arguments: string; repairs: RepairKind[] } | undefined {
  const repairs: RepairKind[] = [];
  let value = parse(text);
  if (typeof value === "string") {
    value = parse(value);
    if (!isObject(value)) return undefined;
    repairs.push("double_encoded");
  }
  if (!isObject(value)) return undefined;
  let args = value;
  const nested = unwrapNested(args, schema);
  if (nested) {
    args = nested;
    repairs.push("nested_json");
  }
  const renamed = renameNearParameter(args, schema);
  if (renamed) {
    args = renamed;
    repairs.push("param_name");
  }
  return { arguments: repairs.length > 0 ? JSON.stringify(args) : text, repairs };
}

/** `{"cmd": "{\"cmd\": \"ls\"}"}`: the one value is the JSON of the expected object itself. */
function unwrapNested(args: Record<string, unknown>, schema: Schema): Record<string, unknown> | undefined {
  const keys = Object.keys(args);
  if (keys.length !== 1) return undefined;
  const key = keys[0]!;
  const value = args[key];
  if (typeof value !== "string" || !value.trimStart().startsWith("{")) return undefined;
  const inner = parse(value);
  if (!isObject(inner) || !(key in inner)) return undefined;
  const properties = schema.properties;
  if (properties && Object.keys(inner).some((k) => !(k in properties))) return undefined;
  return inner;
}

/**
 * `{"command": "ls"}` for a schema whose one required parameter of that type is `cmd`: renamed
 * only when that parameter is missing, the call has exactly one undeclared key, of the same type,
 * and its name is near (same letters in order, or a typo away).
 */
function renameNearParameter(args: Record<string, unknown>, schema: Schema): Record<string, unknown> | undefined {
  const properties = schema.properties;
  if (!properties || !Array.isArray(schema.required)) return undefined;
  const unknown = Object.keys(args).filter((key) => !(key in properties));
  if (unknown.length !== 1) return undefined;
  const key = unknown[0]!;
  const value = args[key];
  const required = schema.required.filter((name): name is string => typeof name === "string" && name in properties);
  const sameType = required.filter((name) => matchesType(value, properties[name]?.type));
  if (sameType.length !== 1) return undefined;
  const target = sameType[0]!;
  if (target in args || !isNear(key, target)) return undefined;
  const renamed: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) renamed[k === key ? target : k] = v;
  return renamed;
}

function matchesType(value: unknown, type: unknown): boolean {
  if (type === undefined) return false;
  const types = Array.isArray(type) ? type : [type];
  return types.some((t) => {
    if (t === "string") return typeof value === "string";
    if (t === "integer") return Number.isInteger(value);
    if (t === "number") return typeof value === "number";
    if (t === "boolean") return typeof value === "boolean";
    if (t === "array") return Array.isArray(value);
    if (t === "object") return isObject(value);
    return false;
  });
}

function isNear(a: string, b: string): boolean {
  const x = a.toLowerCase().replace(/[_-]/g, "");
  const y = b.toLowerCase().replace(/[_-]/g, "");
  if (x === y) return true;
  const [short, long] = x.length <= y.length ? [x, y] : [y, x];
  if (short.length >= 2 && short[0] === long[0] && isSubsequence(short, long)) return true;
  return short.length >= 4 && editDistance(x, y) <= 2;
}

function isSubsequence(short: string, long: string): boolean {
  let at = 0;
  for (const ch of long) if (ch === short[at]) at++;
  return at === short.length;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
