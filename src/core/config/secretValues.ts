import type { AgentdConfig } from "./schema.ts";

/**
 * The secret values a resolved config holds, for withholding from commands by value: the API keys
 * (providers', the watchdog model's), the headers sent to a collector or webhook (where their
 * credentials go), and every value read through `{env:NAME}` (a key in a header or URL too). Pure.
 */
export function configSecretValues(
  config: AgentdConfig,
  envReferences: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const values = [
    ...config.providers.map((provider) => provider.api_key),
    config.watchdog.tier3.api_key,
    ...Object.values(config.telemetry.otlp.headers),
    ...Object.values(config.watchdog.webhook?.headers ?? {}),
    ...envReferences.map((name) => env[name]),
  ];
  return [...new Set(values.filter((value): value is string => typeof value === "string" && value !== ""))];
}
