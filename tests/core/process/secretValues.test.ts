import { describe, expect, test } from "bun:test";
import { configSecretValues, parseConfig } from "../../../src/core/config/index.ts";
import { withoutSecrets } from "../../../src/core/process/confinement/secretEnv.ts";

const KEY = "sk-proj-4f9a1c0d2b7e";

describe("withoutSecrets: secrets by value", () => {
  test("a variable whose value contains a secret value is withheld whatever its name", () => {
    const env = withoutSecrets(
      {
        PATH: "/bin",
        SUDO_COMMAND: `/usr/bin/env OPENAI_API_KEY=${KEY} agentd serve`,
        NOTES: `prefix${KEY}suffix`,
        LANG: "C.UTF-8",
      },
      { secretValues: [KEY] },
    );
    expect(env).toEqual({ PATH: "/bin", LANG: "C.UTF-8" });
  });

  test("values shorter than 8 characters are not matched: they would withhold half the environment", () => {
    const inherited = { PATH: "/usr/bin:/bin", SHELL: "/bin/bash", LANG: "C.UTF-8" };
    expect(withoutSecrets(inherited, { secretValues: ["bin", "/bin/ba", ""] })).toEqual(inherited);
    expect(withoutSecrets(inherited, { secretValues: ["/bin/bas"] })).toEqual({ PATH: "/usr/bin:/bin", LANG: "C.UTF-8" });
  });

  test("a name the operator passes (pty.pass_env) goes through, as for secret-looking names", () => {
    const env = withoutSecrets({ MY_UPSTREAM: KEY, SUDO_COMMAND: `env K=${KEY}` }, { secretValues: [KEY], pass: ["MY_UPSTREAM"] });
    expect(env).toEqual({ MY_UPSTREAM: KEY });
  });
});

describe("configSecretValues", () => {
  test("the API keys, header values and every {env:NAME} value the config read", () => {
    const text = JSON.stringify({
      providers: [
        { name: "a", base_url: "https://a.example/v1", api_key: KEY },
        { name: "b", base_url: "https://b.example/v1", api_key: "{env:B_KEY}" },
        { name: "c", base_url: "https://c.example/v1" },
      ],
      telemetry: { otlp: { endpoint: "https://otel.example", headers: { authorization: "Bearer {env:OTEL_TOKEN}" } } },
      watchdog: { tier3: { api_key: "tier3-key-value" } },
    });
    const env = { B_KEY: "b-key-from-env", OTEL_TOKEN: "otel-token-value", UNRELATED: "not-read-by-config" };
    const config = parseConfig(text, { file: "agentd.jsonc", env });
    const values = configSecretValues(config, ["B_KEY", "OTEL_TOKEN", "UNSET_NAME"], env);
    expect(values.sort()).toEqual([KEY, "b-key-from-env", "Bearer otel-token-value", "otel-token-value", "tier3-key-value"].sort());
  });
});
