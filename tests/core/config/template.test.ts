import { describe, expect, test } from "bun:test";
import { CONFIG_TEMPLATE, parseConfig } from "../../../src/core/config/index.ts";

describe("the `agentd init` template", () => {
  test("parses, and every value it spells out is the default", () => {
    const fromTemplate = parseConfig(CONFIG_TEMPLATE, { file: "agentd.jsonc", env: {} });
    const defaults = parseConfig("", { file: "agentd.jsonc", env: {} });
    expect(fromTemplate).toEqual(defaults);
  });

  test("its commented-out provider is valid once uncommented", () => {
    const uncommented = CONFIG_TEMPLATE.replace(/^(\s*)\/\/ ( *[{}"])/gm, "$1$2");
    expect(uncommented).not.toBe(CONFIG_TEMPLATE);
    const config = parseConfig(uncommented, { file: "agentd.jsonc", env: { OPENAI_API_KEY: "sk-test" } });
    expect(config.providers).toHaveLength(1);
    expect(config.providers[0]).toMatchObject({
      name: "openai",
      api_key: "sk-test",
      models: ["gpt-4o*", "o4-mini"],
      aliases: { fast: "gpt-4o-mini" },
    });
  });
});
