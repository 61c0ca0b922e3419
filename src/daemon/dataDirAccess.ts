import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * The data dir holds transcripts, tool output, logs and the token: only the user agentd runs as may
 * enter it. Closing the directory covers every file in it whatever the file's own mode, without a
 * umask that the commands the agent runs would inherit. A directory that is not agentd's own (a
 * shared one such as /tmp, a home or a project given as --data-dir) is left as it is, with a warning.
 */
export function restrictDataDir(dataDir: string, sharedWithGid?: number): string | undefined {
  const existed = existsSync(dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const info = statSync(dataDir);
  if ((info.mode & 0o7077) === 0) return undefined;
  // Shared with a worker that runs as a service user (workerSplit.ts shareDataDir): as it should be.
  if (sharedWithGid !== undefined && info.uid === 0 && info.gid === sharedWithGid && (info.mode & 0o7777) === 0o1770) return undefined;
  const ours = !existed || (info.uid === process.getuid?.() && (info.mode & 0o1000) === 0 && existsSync(join(dataDir, "agentd.db")));
  if (!ours)
    return `${dataDir} is open to other users (mode ${(info.mode & 0o7777).toString(8)}) and is not agentd's own, so it is left as it is; give agentd a directory of its own`;
  try {
    chmodSync(dataDir, 0o700);
    return undefined;
  } catch (error) {
    return `Cannot restrict ${dataDir} to its owner: ${(error as Error).message}`;
  }
}
