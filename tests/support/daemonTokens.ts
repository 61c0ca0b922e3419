import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const tokens = new Map<string, string>();

/**
 * Started as root (as the tests run), agentd asks for its token on decisions even on loopback:
 * the test is the person at the keyboard, who has it. Remembered per URL once the daemon listens.
 */
export function rememberDaemonToken(url: string, dataDir: string): void {
  const file = join(dataDir, "token");
  if (existsSync(file)) tokens.set(url, readFileSync(file, "utf8").trim());
}

export function daemonToken(url: string | undefined): string | undefined {
  return url === undefined ? undefined : tokens.get(url);
}

/**
 * AGENTD_TOKEN for a CLI run aimed at a daemon this test started (by --url or AGENTD_URL), unless
 * the run names its own (or names AGENTD_TOKEN as undefined: a run meant to go without).
 */
export function tokenEnvFor(args: readonly string[], env: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  if ("AGENTD_TOKEN" in env || args.includes("--token")) return env;
  const at = args.indexOf("--url");
  const token = daemonToken(at >= 0 ? args[at + 1] : env.AGENTD_URL);
  return token ? { ...env, AGENTD_TOKEN: token } : env;
}
