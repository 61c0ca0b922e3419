import { closeSync, fstatSync, writeFileSync } from "node:fs";
import type { LoadedConfig } from "../core/config/loadConfig.ts";
import { trackChild } from "../core/process/ownChildren.ts";
import { selfCommand } from "./selfCommand.ts";
import { serveArgs, type ServeOptions } from "./serveOptions.ts";

/** The descriptor the child writes the resolved config to: never its stdout, which a person may be reading. */
const HANDOFF_FD = 3;

/**
 * Loads the config in a short-lived child (`agentd serve --resolve-config`) and reads it back as
 * plain JSON. The zod schemas cost the supervisor about 7 MB of memory for its whole life; built in
 * the child, they go when it exits. The child reads the same file, environment and working
 * directory, so the config is the one `loadConfig` makes. A config error is printed by the child on
 * the shared stderr, word for word as before; the result is then its exit code.
 */
export async function loadConfigInChild(options: ServeOptions): Promise<LoadedConfig | { exitCode: number }> {
  const child = trackChild(
    Bun.spawn([...selfCommand(), "serve", "--resolve-config", ...serveArgs({ configPath: options.configPath })], {
      stdio: ["ignore", "inherit", "inherit", "pipe"],
      // The environment as it is now (NO_CONFIG_SEARCH_ENV is set after start), not as Bun saw it at launch.
      env: { ...process.env },
    }),
  );
  const fd = child.stdio[HANDOFF_FD] as unknown as number;
  try {
    const [text, exitCode] = await Promise.all([Bun.file(fd).text(), child.exited]);
    if (exitCode !== 0) return { exitCode };
    return JSON.parse(text) as LoadedConfig;
  } finally {
    closeSync(fd);
  }
}

/** Whether a supervisor gave this process the descriptor to hand the config over on. */
export function handoffAvailable(): boolean {
  try {
    const stat = fstatSync(HANDOFF_FD);
    // Bun's extra "pipe" descriptors are socket pairs.
    return stat.isSocket() || stat.isFIFO();
  } catch {
    return false;
  }
}

/** The child's side: loads the config (zod and all) and hands it over on fd 3. */
export async function writeResolvedConfig(options: ServeOptions): Promise<number> {
  const { loadConfig } = await import("../core/config/loadConfig.ts");
  const loaded = loadConfig({ explicitPath: options.configPath });
  writeFileSync(HANDOFF_FD, JSON.stringify(loaded));
  return 0;
}
