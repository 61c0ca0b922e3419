import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_TEMPLATE } from "../../src/core/config/index.ts";
import { runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

afterAll(removeTempDirs);

describe("agentd init and agentd config check", () => {
  test("init writes the commented template, and config check accepts it", async () => {
    const dir = makeTempDir();
    const init = await runAgentd(["init"], { cwd: dir, env: { HOME: dir } });
    expect(init.stderr).toBe("");
    expect(init.code).toBe(0);
    expect(init.stdout).toBe("wrote agentd.jsonc\n");
    const written = readFileSync(join(dir, "agentd.jsonc"), "utf8");
    expect(written).toBe(CONFIG_TEMPLATE);
    expect(written).toContain("//");
    expect(statSync(join(dir, "agentd.jsonc")).mode & 0o777).toBe(0o644);

    // Found as ./agentd.jsonc, and by --config.
    const found = await runAgentd(["config", "check"], { cwd: dir, env: { HOME: dir } });
    expect(found.stderr).toBe("");
    expect(found.code).toBe(0);
    expect(found.stdout.split("\n")[0]).toBe(`${join(dir, "agentd.jsonc")}: ok, 0 provider(s)`);
    const explicit = await runAgentd(["config", "check", "--config", join(dir, "agentd.jsonc")], {
      cwd: makeTempDir(),
      env: { HOME: dir },
    });
    expect(explicit.code).toBe(0);
    expect(explicit.stdout).toStartWith(`${join(dir, "agentd.jsonc")}: ok`);
  }, 60_000);

  test("init refuses to overwrite without --force", async () => {
    const dir = makeTempDir();
    const path = join(dir, "custom.jsonc");
    writeFileSync(path, "{}\n");
    const refused = await runAgentd(["init", "--config", path], { cwd: dir, env: { HOME: dir } });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`Cannot write ${path}: it already exists (use --force to overwrite)`);
    expect(readFileSync(path, "utf8")).toBe("{}\n");
    const forced = await runAgentd(["init", "--config", path, "--force"], { cwd: dir, env: { HOME: dir } });
    expect(forced.code).toBe(0);
    expect(readFileSync(path, "utf8")).toBe(CONFIG_TEMPLATE);
  }, 60_000);

  test("config check on an invalid file: exit 2 and file:line:col: path: message on stderr", async () => {
    const dir = makeTempDir();
    const path = join(dir, "agentd.jsonc");
    writeFileSync(path, '{\n  "providers": [\n    {\n      "name": "a",\n      "base_url": "not a url"\n    }\n  ]\n}\n');
    const result = await runAgentd(["config", "check", "--config", path], { cwd: dir, env: { HOME: dir } });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`${path}:5:19: providers[0].base_url: expected a URL\n`);
  }, 60_000);

  test("config check lists every problem, in the order of the file, each with its file:line:col", async () => {
    const dir = makeTempDir();
    const path = join(dir, "agentd.jsonc");
    writeFileSync(
      path,
      '{\n  "server": { "port": "http" },\n  "providers": [\n    {\n      "name": "a",\n      "base_url": "not a url"\n    }\n  ],\n  "servre": 1\n}\n',
    );
    const result = await runAgentd(["config", "check", "--config", path], { cwd: dir, env: { HOME: dir } });
    expect(result.code).toBe(2);
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toStartWith(`${path}:2:23: server.port: `);
    expect(lines[1]).toBe(`${path}:6:19: providers[0].base_url: expected a URL`);
    expect(lines[2]).toStartWith(`${path}:9:3: servre: unknown key "servre"; did you mean "server"?`);
  }, 60_000);

  test("config check with no file anywhere runs on defaults and says what is missing", async () => {
    const dir = makeTempDir();
    const result = await runAgentd(["config", "check"], { cwd: dir, env: { HOME: dir } });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      '(no config file; defaults): ok, 0 provider(s)\nnote: No provider is configured: add one under "providers" in agentd.jsonc, or set OPENAI_API_KEY.\n',
    );
  }, 60_000);

  test("config check honours AGENTD_CONFIG and OPENAI_API_KEY", async () => {
    const dir = makeTempDir();
    const path = join(dir, "elsewhere.jsonc");
    writeFileSync(path, '{ "server": { "port": 7071 } }\n');
    const result = await runAgentd(["config", "check"], { cwd: dir, env: { HOME: dir, AGENTD_CONFIG: path, OPENAI_API_KEY: "sk-test" } });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${path}: ok, 1 provider(s)\nnote: Using a default OpenAI provider from OPENAI_API_KEY.\n`);
  }, 60_000);

  test("config check with a --config that does not exist: exit 2", async () => {
    const dir = makeTempDir();
    const result = await runAgentd(["config", "check", "--config", join(dir, "nope.jsonc")], { cwd: dir, env: { HOME: dir } });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`Cannot read the config file ${join(dir, "nope.jsonc")}: it does not exist\n`);
  }, 60_000);

  test("an unset {env:} variable names the variable and its place", async () => {
    const dir = makeTempDir();
    const path = join(dir, "agentd.jsonc");
    writeFileSync(
      path,
      '{\n  "providers": [{ "name": "a", "base_url": "https://x.example/v1", "api_key": "{env:AGENTD_TEST_NOT_SET}" }]\n}\n',
    );
    const result = await runAgentd(["config", "check"], { cwd: dir, env: { HOME: dir } });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `${path}:2:79: providers[0].api_key: environment variable AGENTD_TEST_NOT_SET is not set (referenced as {env:AGENTD_TEST_NOT_SET})\n`,
    );
  }, 60_000);
});
