import { findNodeAtLocation, parseTree, printParseErrorCode, type Node, type ParseError } from "jsonc-parser";
import type { z } from "zod";
import { ConfigError, formatPath, offsetToLineColumn } from "./configError.ts";
import { didYouMean } from "./didYouMean.ts";
import { configSchema, type AgentdConfig } from "./schema.ts";
import { schemaKeysAt } from "./schemaKeys.ts";
import { interpolateEnv } from "./envInterpolation.ts";

export interface ParseConfigOptions {
  /** Name shown in messages (the file's path as the user gave it). */
  file: string;
  env: Record<string, string | undefined>;
  /** Told each variable a `{env:NAME}` reads: those hold secrets the daemon's children must not see. */
  onEnvReference?: (name: string) => void;
}

/** Parses and validates agentd.jsonc text. Pure: the caller reads the file and the environment. */
export function parseConfig(text: string, options: ParseConfigOptions): AgentdConfig {
  const locate = (offset: number) => ({ file: options.file, ...offsetToLineColumn(text, offset) });
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });
  const first = errors[0];
  if (first) throw new ConfigError(describeSyntaxError(first), { location: locate(first.offset) });
  if (root && root.type !== "object") throw new ConfigError("expected an object at the top level", { location: locate(root.offset) });
  const duplicate = root ? findDuplicateKey(root, []) : undefined;
  if (duplicate)
    throw new ConfigError(`duplicate key "${duplicate.key}" (it is already set above; only one may stay)`, {
      location: locate(duplicate.offset),
      path: formatPath(duplicate.path),
    });

  const raw = interpolateEnv(
    nodeValue(root),
    options.env,
    (path, reason) => {
      const node = root ? findNodeAtLocation(root, path as (string | number)[]) : undefined;
      return new ConfigError(reason, { location: locate(node?.offset ?? 0), path: formatPath(path) });
    },
    [],
    options.onEnvReference,
  );
  // Built for this parse and dropped with it: held for the process's life, the schemas cost megabytes.
  const schema = configSchema();
  const result = schema.safeParse(raw ?? {});
  if (result.success) return result.data;
  // Every problem at once, in the order they appear in the file: one run of `config check` lists them all.
  const problems = result.error.issues
    .flatMap((issue) =>
      issue.code === "unrecognized_keys" && issue.keys.length > 1 ? issue.keys.map((key) => ({ ...issue, keys: [key] })) : [issue],
    )
    .map((issue) => issueToError(issue, schema, root, locate))
    .sort((a, b) => (a.location?.line ?? 0) - (b.location?.line ?? 0) || (a.location?.column ?? 0) - (b.location?.column ?? 0));
  throw ConfigError.all(problems);
}

function describeSyntaxError(error: ParseError): string {
  const name = printParseErrorCode(error.error);
  const readable = name.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
  return `invalid JSONC: ${readable}`;
}

/** The first key set twice in one object: JSON parsers keep the last silently, which surprises. */
function findDuplicateKey(node: Node, path: (string | number)[]): { key: string; offset: number; path: (string | number)[] } | undefined {
  if (node.type === "object") {
    const seen = new Set<string>();
    for (const property of node.children ?? []) {
      const keyNode = property.children?.[0];
      const key = keyNode?.value as string;
      if (seen.has(key)) return { key, offset: keyNode!.offset, path: [...path, key] };
      seen.add(key);
      const value = property.children?.[1];
      const inner = value ? findDuplicateKey(value, [...path, key]) : undefined;
      if (inner) return inner;
    }
  }
  if (node.type === "array") {
    for (const [index, child] of (node.children ?? []).entries()) {
      const inner = findDuplicateKey(child, [...path, index]);
      if (inner) return inner;
    }
  }
  return undefined;
}

function nodeValue(node: Node | undefined): unknown {
  if (!node) return undefined;
  switch (node.type) {
    case "object":
      return Object.fromEntries(
        (node.children ?? []).map((property) => [property.children![0]!.value as string, nodeValue(property.children![1])]),
      );
    case "array":
      return (node.children ?? []).map(nodeValue);
    default:
      return node.value;
  }
}

function issueToError(
  issue: z.core.$ZodIssue,
  schema: z.ZodType,
  root: Node | undefined,
  locate: (offset: number) => { file: string; line: number; column: number },
): ConfigError {
  const path = issue.path as (string | number)[];
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0]!;
    const objectNode = root ? findNodeAtLocation(root, path) : undefined;
    const keyNode = objectNode?.children?.find((property) => property.children?.[0]?.value === key)?.children?.[0];
    const suggestion = didYouMean(key, schemaKeysAt(schema, path));
    const hint = suggestion ? `; did you mean "${suggestion}"?` : "";
    return new ConfigError(`unknown key "${key}"${hint}`, {
      location: locate(keyNode?.offset ?? objectNode?.offset ?? 0),
      path: formatPath([...path, key]),
    });
  }
  const exact = root ? findNodeAtLocation(root, path) : undefined;
  let node = exact;
  // A missing key has no node: point at the nearest enclosing value that exists.
  for (let depth = path.length - 1; !node && depth >= 0 && root; depth--) node = findNodeAtLocation(root, path.slice(0, depth));
  const message = issue.message.replace(/^Invalid input: /, "");
  const reason = exact === undefined && issue.code === "invalid_type" ? `missing required key (${message})` : message;
  return new ConfigError(reason, { location: locate(node?.offset ?? 0), path: formatPath(path) || "(root)" });
}
