import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadConfig, resolveDataDir } from "../../../src/core/config/index.ts";
import { makeTempDir, removeTempDirs } from "../../support/tempDir.ts";

afterAll(removeTempDirs);

/** A home dir, a working dir, and four config files, each with its own port so the winner is visible. */
function layout() {
  const root = makeTempDir("agentd-config-");
  const home = join(root, "home");
  const cwd = join(root, "work");
  mkdirSync(join(home, ".config", "agentd"), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const files = {
    flag: join(root, "flag.jsonc"),
    env: join(root, "env.jsonc"),
    cwd: join(cwd, "agentd.jsonc"),
    home: join(home, ".config", "agentd", "agentd.jsonc"),
  };
  const ports = { flag: 1001, env: 1002, cwd: 1003, home: 1004 };
  for (const [name, path] of Object.entries(files)) writeFileSync(path, `{ "server": { "port": ${ports[name as keyof typeof ports]} } }`);
  return { home, cwd, files };
}

describe("config discovery: --config, AGENTD_CONFIG, ./agentd.jsonc, ~/.config/agentd/agentd.jsonc", () => {
  test("--config wins over everything", () => {
    const { home, cwd, files } = layout();
    const loaded = loadConfig({ explicitPath: files.flag, env: { AGENTD_CONFIG: files.env }, cwd, home });
    expect(loaded.path).toBe(files.flag);
    expect(loaded.config.server.port).toBe(1001);
  });

  test("AGENTD_CONFIG comes next", () => {
    const { home, cwd, files } = layout();
    const loaded = loadConfig({ env: { AGENTD_CONFIG: files.env }, cwd, home });
    expect(loaded.path).toBe(files.env);
    expect(loaded.config.server.port).toBe(1002);
  });

  test("then ./agentd.jsonc in the working directory", () => {
    const { home, cwd, files } = layout();
    const loaded = loadConfig({ env: {}, cwd, home });
    expect(loaded.path).toBe(files.cwd);
    expect(loaded.config.server.port).toBe(1003);
  });

  test("then ~/.config/agentd/agentd.jsonc", () => {
    const { home, files } = layout();
    const loaded = loadConfig({ env: {}, cwd: makeTempDir(), home });
    expect(loaded.path).toBe(files.home);
    expect(loaded.config.server.port).toBe(1004);
  });

  test("with no file anywhere agentd runs on its defaults", () => {
    const loaded = loadConfig({ env: {}, cwd: makeTempDir(), home: makeTempDir() });
    expect(loaded.path).toBeUndefined();
    expect(loaded.config.server.port).toBe(7070);
    expect(loaded.config.server.bind).toBe("127.0.0.1");
  });

  test("a --config or AGENTD_CONFIG that does not exist is an error, not a silent fallback", () => {
    const { home, cwd } = layout();
    expect(() => loadConfig({ explicitPath: join(cwd, "missing.jsonc"), env: {}, cwd, home })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { AGENTD_CONFIG: join(cwd, "missing.jsonc") }, cwd, home })).toThrow(
      /missing\.jsonc: it does not exist/,
    );
  });

  test("errors in a discovered file name that file", () => {
    const cwd = makeTempDir();
    writeFileSync(join(cwd, "agentd.jsonc"), '{\n  "log": { "levle": "info" }\n}\n');
    expect(() => loadConfig({ env: {}, cwd, home: makeTempDir() })).toThrow(
      `${join(cwd, "agentd.jsonc")}:2:12: log.levle: unknown key "levle"; did you mean "level"?`,
    );
  });
});

describe("providers from the environment", () => {
  test("OPENAI_API_KEY alone gives a default OpenAI provider", () => {
    const loaded = loadConfig({ env: { OPENAI_API_KEY: "sk-test" }, cwd: makeTempDir(), home: makeTempDir() });
    expect(loaded.config.providers).toHaveLength(1);
    expect(loaded.config.providers[0]).toMatchObject({
      name: "openai",
      base_url: "https://api.openai.com/v1",
      api_key: "sk-test",
      models: ["*"],
    });
    expect(loaded.notes.join("\n")).toContain("OPENAI_API_KEY");
  });

  test("OPENAI_BASE_URL moves the default provider", () => {
    const loaded = loadConfig({
      env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
      cwd: makeTempDir(),
      home: makeTempDir(),
    });
    expect(loaded.config.providers[0]!.base_url).toBe("http://127.0.0.1:9/v1");
  });

  test("without a key or a provider the notes say how to add one", () => {
    const loaded = loadConfig({ env: {}, cwd: makeTempDir(), home: makeTempDir() });
    expect(loaded.config.providers).toEqual([]);
    expect(loaded.notes).toEqual(['No provider is configured: add one under "providers" in agentd.jsonc, or set OPENAI_API_KEY.']);
  });

  test("configured providers are not joined by the default one", () => {
    const cwd = makeTempDir();
    writeFileSync(join(cwd, "agentd.jsonc"), '{ "providers": [{ "name": "mine", "base_url": "http://127.0.0.1:9/v1" }] }');
    const loaded = loadConfig({ env: { OPENAI_API_KEY: "sk-test" }, cwd, home: makeTempDir() });
    expect(loaded.config.providers.map((p) => p.name)).toEqual(["mine"]);
    expect(loaded.notes).toEqual([]);
  });
});

describe("data dir", () => {
  const config = loadConfig({ env: {}, cwd: makeTempDir(), home: makeTempDir() }).config;
  test("--data-dir, then AGENTD_DATA_DIR, then the config, then ./.agentd", () => {
    expect(resolveDataDir({ flag: "/a", env: { AGENTD_DATA_DIR: "/b" }, config: { ...config, data_dir: "/c" }, cwd: "/w" })).toBe("/a");
    expect(resolveDataDir({ env: { AGENTD_DATA_DIR: "/b" }, config: { ...config, data_dir: "/c" }, cwd: "/w" })).toBe("/b");
    expect(resolveDataDir({ env: {}, config: { ...config, data_dir: "/c" }, cwd: "/w" })).toBe("/c");
    expect(resolveDataDir({ env: {}, config, cwd: "/w" })).toBe("/w/.agentd");
    expect(resolveDataDir({ flag: "rel/dir", env: {}, config, cwd: "/w" })).toBe("/w/rel/dir");
  });
});
