import { afterAll, describe, expect, test } from "bun:test";
import { parseTree } from "jsonc-parser";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { configSchema } from "../../src/core/config/index.ts";
import { runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

afterAll(removeTempDirs);

/** Sections of the schema's top level (its object keys, `$schema` aside). */
function schemaSections(schema: z.ZodObject): string[] {
  return Object.keys(schema.shape).filter((key) => key !== "$schema");
}

/**
 * The sections a template leaves out: a section counts when it is a top-level key, or a
 * commented-out top-level line (`// "data_dir": …`) for a setting with no default.
 */
function missingSections(template: string, sections: readonly string[]): string[] {
  const root = parseTree(template);
  const present = new Set((root?.children ?? []).map((property) => String(property.children?.[0]?.value)));
  const commented = new Set([...template.matchAll(/^ {2}\/\/ "([a-z_]+)":/gm)].map((match) => match[1]));
  return sections.filter((section) => !present.has(section) && !commented.has(section));
}

describe("the template agentd init writes", () => {
  test("covers every section of the config schema", async () => {
    const dir = makeTempDir();
    const init = await runAgentd(["init"], { cwd: dir, env: { HOME: dir } });
    expect(init.code).toBe(0);
    const written = readFileSync(join(dir, "agentd.jsonc"), "utf8");
    const sections = schemaSections(configSchema());
    expect(sections).toEqual(expect.arrayContaining(["server", "proxy", "alerts", "telemetry", "hops"]));
    expect(missingSections(written, sections)).toEqual([]);
  }, 60_000);

  test("the coverage check fails for a section the schema gains and the template lacks", async () => {
    const dir = makeTempDir();
    await runAgentd(["init"], { cwd: dir, env: { HOME: dir } });
    const written = readFileSync(join(dir, "agentd.jsonc"), "utf8");
    const grown = configSchema().extend({ inventory: z.strictObject({ path: z.string().default("x") }).prefault({}) });
    expect(missingSections(written, schemaSections(grown))).toEqual(["inventory"]);
    // A section named only in a comment's prose, not as a key, does not count.
    expect(missingSections(`${written}\n// the inventory section lists hosts\n`, ["inventory"])).toEqual(["inventory"]);
  }, 60_000);

  test("severity and the hop key advice are in it, and it never points hops at ~/.ssh", async () => {
    const dir = makeTempDir();
    await runAgentd(["init"], { cwd: dir, env: { HOME: dir } });
    const written = readFileSync(join(dir, "agentd.jsonc"), "utf8");
    expect(written).toContain('"severity": "critical"');
    expect(written).not.toMatch(/"(known_hosts|identity_files)": \[?"~\/\.ssh/);
  }, 60_000);
});
