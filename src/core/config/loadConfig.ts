import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { ConfigError } from "./configError.ts";
import { parseConfig } from "./parseConfig.ts";
import type { AgentdConfig } from "./schema.ts";
import { NO_CONFIG_SEARCH_ENV } from "./configSearch.ts";

export interface LoadConfigOptions {
  /** `--config`: must exist when given. */
  explicitPath?: string;
  /**
   * The text of `explicitPath`, read by someone else: a worker running as a service user gets its
   * config from the privileged monitor, which reads the file the supervisor pinned.
   */
  text?: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
  home?: string;
}

export interface LoadedConfig {
  config: AgentdConfig;
  /** The file read, or undefined when agentd runs on its defaults. */
  path?: string;
  /** Things the status page should tell the operator (e.g. no provider configured). */
  notes: string[];
  /** Environment variables the config took values from (`{env:NAME}`, the default provider's key). */
  envReferences: string[];
}

/** Candidate files in DESIGN.md's order: --config, AGENTD_CONFIG, ./agentd.jsonc, ~/.config/agentd/agentd.jsonc. */
export function findConfigFile(options: LoadConfigOptions): string | undefined {
  const env = options.env ?? process.env;
  const explicit = options.explicitPath ?? env.AGENTD_CONFIG;
  if (explicit) {
    if (!existsSync(explicit)) throw new ConfigError(`Cannot read the config file ${explicit}: it does not exist`);
    return explicit;
  }
  // Set by a supervisor that started without a file: none is searched for later either.
  if (env[NO_CONFIG_SEARCH_ENV] === "1") return undefined;
  const candidates = [
    join(options.cwd ?? process.cwd(), "agentd.jsonc"),
    join(options.home ?? homedir(), ".config", "agentd", "agentd.jsonc"),
  ];
  return candidates.find((candidate) => existsSync(candidate));
}

export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const path = options.text !== undefined && options.explicitPath ? options.explicitPath : findConfigFile(options);
  let text = options.text ?? "";
  if (path && options.text === undefined) {
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      throw new ConfigError(`Cannot read the config file ${path}: ${(error as Error).message}`);
    }
  }
  const references = new Set<string>();
  const config = parseConfig(text, { file: path ?? "agentd.jsonc", env, onEnvReference: (name) => references.add(name) });
  const notes: string[] = [];
  if (config.providers.length === 0) {
    if (env.OPENAI_API_KEY) {
      references.add("OPENAI_API_KEY");
      config.providers.push(defaultOpenAiProvider(env.OPENAI_API_KEY, env.OPENAI_BASE_URL));
      notes.push("Using a default OpenAI provider from OPENAI_API_KEY.");
    } else {
      notes.push('No provider is configured: add one under "providers" in agentd.jsonc, or set OPENAI_API_KEY.');
    }
  }
  return { config, path: path ? resolve(path) : undefined, notes, envReferences: [...references] };
}

function defaultOpenAiProvider(apiKey: string, baseUrl: string | undefined): AgentdConfig["providers"][number] {
  return {
    name: "openai",
    base_url: baseUrl ?? "https://api.openai.com/v1",
    api_key: apiKey,
    models: ["*"],
    aliases: {},
    priority: 0,
    weight: 1,
    timeouts: { connect_ms: 10_000, first_byte_ms: 120_000, idle_ms: 300_000, total_ms: 1_800_000 },
    wire: "chat",
    tool_call_text: "parse",
  };
}
