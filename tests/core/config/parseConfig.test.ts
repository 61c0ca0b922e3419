import { describe, expect, test } from "bun:test";
import { ConfigError, parseConfig } from "../../../src/core/config/index.ts";

const parse = (text: string, env: Record<string, string | undefined> = {}) => parseConfig(text, { file: "agentd.jsonc", env });

/** The message a config problem prints, or a failure when the text parses. */
function errorOf(text: string, env: Record<string, string | undefined> = {}): ConfigError {
  try {
    parse(text, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected the config to be rejected");
}

describe("parseConfig: valid files", () => {
  test("a valid file gives the values it sets and the defaults for the rest", () => {
    const config = parse(`{
  "data_dir": "/var/lib/agentd",
  "server": { "bind": "0.0.0.0", "port": 8080 },
  "log": { "level": "debug" },
  "providers": [
    { "name": "local", "base_url": "http://127.0.0.1:11434/v1", "models": ["llama*"], "priority": 5 }
  ]
}`);
    expect(config.data_dir).toBe("/var/lib/agentd");
    expect(config.server).toEqual({
      bind: "0.0.0.0",
      port: 8080,
      body_limit_bytes: 10 * 1024 * 1024,
      drain_timeout_ms: 10_000,
      idle_timeout_s: 30,
      max_connections_per_client: 512,
      require_token: false,
    });
    expect(config.log.level).toBe("debug");
    expect(config.log.file_keep).toBe(5);
    expect(config.supervisor.restart_max).toBe(5);
    expect(config.supervisor.restart_window_s).toBe(600);
    expect(config.providers).toHaveLength(1);
    expect(config.providers[0]).toMatchObject({
      name: "local",
      base_url: "http://127.0.0.1:11434/v1",
      models: ["llama*"],
      priority: 5,
      weight: 1,
    });
  });

  test("an empty file and a file of comments alone mean all defaults", () => {
    const defaults = parse("");
    expect(defaults.server.bind).toBe("127.0.0.1");
    expect(defaults.server.port).toBe(7070);
    expect(defaults.providers).toEqual([]);
    expect(parse("// nothing here\n/* nor here */\n")).toEqual(defaults);
    expect(parse("{}")).toEqual(defaults);
  });

  test("line comments, block comments and trailing commas are accepted", () => {
    const config = parse(`// agentd
{
  /* the server */
  "server": {
    "port": 9001, // inline
    "bind": "127.0.0.1",
  },
  "providers": [
    { "name": "a", "base_url": "https://a.example/v1", "models": ["x", "y",], },
  ],
}
`);
    expect(config.server.port).toBe(9001);
    expect(config.providers[0]!.models).toEqual(["x", "y"]);
  });
});

describe("parseConfig: {env:NAME} interpolation", () => {
  test("references are replaced in every string, nested ones included", () => {
    const config = parse(
      `{
  "data_dir": "{env:HOME_DIR}/agentd",
  "providers": [{ "name": "a", "base_url": "https://{env:HOST}/v1", "api_key": "{env:KEY}", "aliases": { "fast": "{env:FAST_MODEL}" } }]
}`,
      { HOME_DIR: "/srv", HOST: "llm.example", KEY: "sk-secret", FAST_MODEL: "mini" },
    );
    expect(config.data_dir).toBe("/srv/agentd");
    expect(config.providers[0]!.base_url).toBe("https://llm.example/v1");
    expect(config.providers[0]!.api_key).toBe("sk-secret");
    expect(config.providers[0]!.aliases).toEqual({ fast: "mini" });
  });

  test("an interpolated value is validated after substitution", () => {
    const error = errorOf(
      `{
  "providers": [
    { "name": "a", "base_url": "{env:URL}" }
  ]
}`,
      { URL: "not a url" },
    );
    expect(error.message).toBe("agentd.jsonc:3:32: providers[0].base_url: expected a URL");
  });

  test("an unset variable is an error at the value's line:col", () => {
    const error = errorOf(`{
  "providers": [{ "name": "a", "base_url": "https://x.example/v1",
    "api_key": "{env:AGENTD_TEST_UNSET_KEY}" }]
}`);
    expect(error.message).toBe(
      "agentd.jsonc:3:16: providers[0].api_key: environment variable AGENTD_TEST_UNSET_KEY is not set (referenced as {env:AGENTD_TEST_UNSET_KEY})",
    );
    expect(error.code).toBe("invalid_config");
  });

  test("a variable set to the empty string counts as unset", () => {
    const error = errorOf(`{ "data_dir": "{env:EMPTY}" }`, { EMPTY: "" });
    expect(error.message).toBe("agentd.jsonc:1:15: data_dir: environment variable EMPTY is not set (referenced as {env:EMPTY})");
  });

  test("text that only looks like a reference is left alone", () => {
    expect(parse(`{ "data_dir": "{env:}/{ENV:X}/env:Y" }`).data_dir).toBe("{env:}/{ENV:X}/env:Y");
  });
});

describe("parseConfig: errors carry the exact file:line:col", () => {
  test("syntax error: a missing comma points at the next token", () => {
    const error = errorOf('{\n  "server": {\n    "port": 7070\n    "bind": "127.0.0.1"\n  }\n}\n');
    expect(error.message).toBe("agentd.jsonc:4:5: invalid JSONC: comma expected");
    expect(error.location).toEqual({ file: "agentd.jsonc", line: 4, column: 5 });
  });

  test("syntax error: a missing value points where the value should be", () => {
    expect(errorOf('{\n  "log":\n}\n').message).toBe("agentd.jsonc:3:1: invalid JSONC: value expected");
  });

  test("wrong type points at the value", () => {
    expect(errorOf('{\n  "server": {\n    "port": "7070"\n  }\n}\n').message).toBe(
      "agentd.jsonc:3:13: server.port: expected number, received string",
    );
  });

  test("a key set twice points at the second one", () => {
    expect(errorOf('{\n  "server": {\n    "port": 7070,\n    "port": 7071\n  }\n}\n').message).toBe(
      'agentd.jsonc:4:5: server.port: duplicate key "port" (it is already set above; only one may stay)',
    );
    expect(errorOf('{ "providers": [ { "name": "a", "name": "b", "base_url": "http://x" } ] }').message).toStartWith(
      "agentd.jsonc:1:33: providers[0].name: duplicate key",
    );
  });

  test("a value out of range points at the value", () => {
    expect(errorOf('{ "server": { "port": 70000 } }').message).toMatch(/^agentd\.jsonc:1:23: server\.port: .*65535/);
  });

  test("a bad URL points at the value, as in DESIGN.md", () => {
    const error = errorOf('{\n  "providers": [\n    {\n      "name": "a",\n      "base_url": "not a url"\n    }\n  ]\n}\n');
    expect(error.message).toBe("agentd.jsonc:5:19: providers[0].base_url: expected a URL");
    expect(error.path).toBe("providers[0].base_url");
  });

  test("a URL with a scheme other than http(s) is rejected", () => {
    expect(errorOf('{ "providers": [{ "name": "a", "base_url": "ftp://x.example/v1" }] }').message).toBe(
      "agentd.jsonc:1:44: providers[0].base_url: expected a URL",
    );
  });

  test("an unknown key points at the key and suggests the closest known one", () => {
    expect(errorOf('{\n  "server": {\n    "prot": 1\n  }\n}\n').message).toBe(
      'agentd.jsonc:3:5: server.prot: unknown key "prot"; did you mean "port"?',
    );
    expect(errorOf('{\n  "sever": {}\n}\n').message).toBe('agentd.jsonc:2:3: sever: unknown key "sever"; did you mean "server"?');
    expect(errorOf('{ "providers": [{ "name": "a", "base_url": "https://x/v1", "api_kye": "k" }] }').message).toBe(
      'agentd.jsonc:1:60: providers[0].api_kye: unknown key "api_kye"; did you mean "api_key"?',
    );
  });

  test("an unknown key that resembles nothing gets no suggestion", () => {
    expect(errorOf('{\n  "zzzzzzzzzz": 1\n}\n').message).toBe('agentd.jsonc:2:3: zzzzzzzzzz: unknown key "zzzzzzzzzz"');
  });

  test("a missing required key points at the object that lacks it", () => {
    const error = errorOf('{\n  "providers": [\n    { "name": "a" }\n  ]\n}\n');
    expect(error.message).toStartWith("agentd.jsonc:3:5: providers[0].base_url: missing required key");
    const noName = errorOf('{\n  "providers": [\n    { "base_url": "https://x.example/v1" }\n  ]\n}\n');
    expect(noName.message).toStartWith("agentd.jsonc:3:5: providers[0].name: missing required key");
  });

  test("a top level that is not an object points at the value", () => {
    expect(errorOf("\n  [1, 2]\n").message).toBe("agentd.jsonc:2:3: expected an object at the top level");
    expect(errorOf('"text"').message).toBe("agentd.jsonc:1:1: expected an object at the top level");
  });

  test("the file name shown is the one given", () => {
    try {
      parseConfig('{ "log": { "level": "loud" } }', { file: "/etc/agentd/agentd.jsonc", env: {} });
      throw new Error("expected a ConfigError");
    } catch (error) {
      expect((error as Error).message).toMatch(/^\/etc\/agentd\/agentd\.jsonc:1:21: log\.level: .*"debug"/);
    }
  });
});
