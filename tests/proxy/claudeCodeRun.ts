/**
 * Runs the real Claude Code CLI (`claude -p … --output-format stream-json --verbose`) against
 * agentd, offline: HOME in a temp dir, ANTHROPIC_BASE_URL at agentd, nonessential traffic off,
 * and every HTTP(S) proxy variable pointing at a closed loopback port, so anything but agentd on
 * 127.0.0.1 fails at once. The run is bounded and killed by its PID when it overstays.
 */
import { join } from "node:path";
import { makeTempDir } from "../support/tempDir.ts";

const CLAUDE = join(import.meta.dir, "../../node_modules/.bin/claude");
const RUN_LIMIT_MS = 60_000;

export interface ClaudeRun {
  exitCode: number | null;
  /** The JSON events Claude Code printed, one per line. */
  events: Record<string, any>[];
  stderr: string;
  workdir: string;
  /** The final `result` event. */
  result: Record<string, any> | undefined;
  /** Content blocks of one type in the assistant (or, for tool_result, user) messages, in order. */
  blocks(type: string): Record<string, any>[];
}

export interface ClaudeOptions {
  /** agentd's base URL, without /v1 (Claude Code appends /v1/messages). */
  baseURL: string;
  prompt: string;
  /** Extra CLI arguments. */
  args?: string[];
  /** Extra environment (e.g. CLAUDE_CODE_MAX_RETRIES). */
  env?: Record<string, string>;
}

export async function runClaude(options: ClaudeOptions): Promise<ClaudeRun> {
  const home = makeTempDir("agentd-claude-");
  const workdir = makeTempDir("agentd-claude-work-");
  const dead = "http://127.0.0.1:9";
  const child = Bun.spawn(
    [CLAUDE, "-p", options.prompt, "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash", ...(options.args ?? [])],
    {
      cwd: workdir,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        ANTHROPIC_BASE_URL: options.baseURL,
        ANTHROPIC_AUTH_TOKEN: "client-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        HTTP_PROXY: dead,
        HTTPS_PROXY: dead,
        ALL_PROXY: dead,
        http_proxy: dead,
        https_proxy: dead,
        all_proxy: dead,
        NO_PROXY: "127.0.0.1",
        no_proxy: "127.0.0.1",
        ...options.env,
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
    .map((line) => JSON.parse(line) as Record<string, any>);
  return {
    exitCode: child.exitCode,
    events,
    stderr,
    workdir,
    result: events.find((e) => e.type === "result"),
    blocks: (type) =>
      events
        .filter((e) => e.type === "assistant" || e.type === "user")
        .flatMap((e) => (Array.isArray(e.message?.content) ? e.message.content : []))
        .filter((b: Record<string, any>) => b.type === type),
  };
}
