/**
 * Runs the real Codex CLI (`codex exec --json`) against agentd, offline: HOME and CODEX_HOME in a
 * temp dir holding its config.toml, update checks, analytics and feedback off, and every HTTP(S)
 * proxy variable pointing at a closed loopback port, so anything but agentd on 127.0.0.1 fails
 * at once. The run is bounded and killed by its PID when it overstays.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../support/tempDir.ts";

const CODEX = join(import.meta.dir, "../../node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex");
const RUN_LIMIT_MS = 45_000;

export interface CodexRun {
  exitCode: number | null;
  /** The JSON events Codex printed, one per line. */
  events: { type: string; item?: Record<string, any>; error?: { message: string }; message?: string }[];
  stderr: string;
  /** The working directory the turn ran in. */
  workdir: string;
  /** The completed items of one type, e.g. "command_execution". */
  items(type: string): Record<string, any>[];
}

export interface CodexOptions {
  /** agentd's /v1 base URL. */
  baseURL: string;
  prompt: string;
  /** Extra top-level config.toml lines. */
  config?: string[];
  /** Extra lines for [model_providers.agentd]. */
  provider?: string[];
  /** Codex's built-in `openai` provider pointed at agentd (`openai_base_url`) instead of a custom one. */
  builtin?: boolean;
}

/** The config.toml this project documents for Codex (docs/http-api.md "Clients"), plus the test's extras. */
export function codexConfig(baseURL: string, config: string[] = [], provider: string[] = []): string {
  return [
    'model = "gpt-test"',
    'model_provider = "agentd"',
    "check_for_update_on_startup = false",
    ...config,
    "",
    "[analytics]",
    "enabled = false",
    "",
    "[feedback]",
    "enabled = false",
    "",
    "[model_providers.agentd]",
    'name = "agentd"',
    `base_url = "${baseURL}"`,
    'wire_api = "responses"',
    'env_key = "AGENTD_CLIENT_KEY"',
    "request_max_retries = 1",
    "stream_max_retries = 1",
    ...provider,
    "",
  ].join("\n");
}

/** The built-in provider's config: only its base URL moves; the key comes from OPENAI_API_KEY. */
export function builtinCodexConfig(baseURL: string, config: string[] = []): string {
  return [
    'model = "gpt-test"',
    `openai_base_url = "${baseURL}"`,
    "check_for_update_on_startup = false",
    ...config,
    "",
    "[analytics]",
    "enabled = false",
    "",
    "[feedback]",
    "enabled = false",
    "",
  ].join("\n");
}

export async function runCodex(options: CodexOptions): Promise<CodexRun> {
  const home = makeTempDir("agentd-codex-");
  const workdir = makeTempDir("agentd-codex-work-");
  const config = options.builtin
    ? builtinCodexConfig(options.baseURL, options.config)
    : codexConfig(options.baseURL, options.config, options.provider);
  await Bun.write(join(home, "config.toml"), config);
  const dead = "http://127.0.0.1:9";
  const child = Bun.spawn(
    [CODEX, "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", options.prompt],
    {
      cwd: workdir,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        CODEX_HOME: home,
        AGENTD_CLIENT_KEY: "client-key",
        OPENAI_API_KEY: "client-key",
        HTTP_PROXY: dead,
        HTTPS_PROXY: dead,
        ALL_PROXY: dead,
        http_proxy: dead,
        https_proxy: dead,
        all_proxy: dead,
        NO_PROXY: "127.0.0.1",
        no_proxy: "127.0.0.1",
      },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const timer = setTimeout(() => process.kill(child.pid, "SIGKILL"), RUN_LIMIT_MS);
  const [stdout, stderr] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
  await child.exited;
  clearTimeout(timer);
  const events = stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));
  return {
    exitCode: child.exitCode,
    events,
    stderr,
    workdir,
    items: (type) => events.filter((e) => e.type === "item.completed" && e.item?.type === type).map((e) => e.item!),
  };
}

export function readIn(run: CodexRun, file: string): string {
  return readFileSync(join(run.workdir, file), "utf8");
}
