import { chmodSync, mkdirSync } from "node:fs";

/**
 * The data dir holds transcripts, tool output, logs and the token: only the user agentd runs as may
 * enter it. Closing the directory covers every file in it whatever the file's own mode, without a
 * umask that the commands the agent runs would inherit.
 */
export function restrictDataDir(dataDir: string): string | undefined {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    chmodSync(dataDir, 0o700);
    return undefined;
  } catch (error) {
    return `Cannot restrict ${dataDir} to its owner: ${(error as Error).message}`;
  }
}
