import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import type { Logger } from "../core/log/index.ts";
import { join } from "node:path";

/**
 * The data dir holds transcripts, tool output, logs and the token: only the user agentd runs as may
 * enter it. Closing the directory covers every file in it whatever the file's own mode, without a
 * umask that the commands the agent runs would inherit. A directory that is not agentd's own (a
 * shared one such as /tmp, a home or a project given as --data-dir) is left as it is, with a warning.
 */
export function restrictDataDir(dataDir: string): string | undefined {
  const existed = existsSync(dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const info = statSync(dataDir);
  if ((info.mode & 0o7077) === 0) return undefined;
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

const RECHECK_MS = 2000;

/**
 * Landlock keeps commands out of the data dir's files but not from its mode: a command running as
 * agentd's user could `chmod 0777` the directory and open it to every local user. Closed again
 * within RECHECK_MS, with a warning. A directory that was never agentd's own (restrictDataDir left
 * it open) is left alone here too.
 */
export function keepDataDirClosed(dataDir: string, log: Logger): () => void {
  const timer = setInterval(() => {
    try {
      const info = statSync(dataDir);
      if ((info.mode & 0o7077) === 0 || info.uid !== process.getuid?.()) return;
      chmodSync(dataDir, 0o700);
      log.warn("security.data_dir_reopened", { data_dir: dataDir, mode: (info.mode & 0o7777).toString(8) });
    } catch (error) {
      log.warn("security.data_dir_check_failed", { data_dir: dataDir, error });
    }
  }, RECHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
