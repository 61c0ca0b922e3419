import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { configKeys, configReferenceTable } from "../../../src/core/config/configReference.ts";
import { configSchema } from "../../../src/core/config/schema.ts";
import { PROJECT_ROOT } from "../../support/binary.ts";

// docs/configuration.md's table of every key is generated from the schema; this test fails when they
// differ. To write the table anew: AGENTD_WRITE_CONFIG_REFERENCE=1 bun test tests/core/config/configReference.test.ts
const DOC = join(PROJECT_ROOT, "docs", "configuration.md");
const START = "<!-- config-reference:start (generated from the schema: tests/core/config/configReference.test.ts) -->\n";
const END = "<!-- config-reference:end -->";

describe("the configuration reference", () => {
  test("docs/configuration.md lists every key the schema accepts, with its type and default, and nothing else", () => {
    const doc = readFileSync(DOC, "utf8");
    const start = doc.indexOf(START);
    const end = doc.indexOf(END);
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    const table = configReferenceTable(configSchema());
    if (process.env.AGENTD_WRITE_CONFIG_REFERENCE === "1") writeFileSync(DOC, doc.slice(0, start + START.length) + table + doc.slice(end));
    expect(doc.slice(start + START.length, end)).toBe(table);
  });

  test("keys, lists, maps, defaults and shapes told apart by type", () => {
    const schema = z.strictObject({
      a: z.strictObject({ b: z.number().default(3), c: z.enum(["x", "y"]).optional() }).prefault({}),
      list: z.array(z.strictObject({ name: z.string() })).default([]),
      map: z.record(z.string(), z.strictObject({ on: z.boolean().default(false) })).optional(),
      checks: z.array(
        z.discriminatedUnion("type", [
          z.strictObject({ type: z.literal("http"), url: z.string() }),
          z.strictObject({ type: z.literal("tcp"), port: z.number() }),
        ]),
      ),
    });
    expect(configKeys(schema)).toEqual([
      { key: "a.b", type: "number", default: "3" },
      { key: "a.c", type: '"x" \\| "y"' },
      { key: "list", type: "list of object", default: "[]" },
      { key: "list[].name", type: "string" },
      { key: "map", type: "map of object" },
      { key: "map.{}.on", type: "boolean", default: "false" },
      { key: "checks", type: "list of object" },
      { key: "checks[].type", type: '"http" \\| "tcp"' },
      { key: "checks[].url", type: 'string (type "http")' },
      { key: "checks[].port", type: 'number (type "tcp")' },
    ]);
  });
});
