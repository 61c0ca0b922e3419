import { dirname } from "node:path";
import { AgentdError } from "../../errors/index.ts";
import { parsePasswd } from "./accountFiles.ts";
import type { CommandIdentity, IdentityHost, OwnPaths } from "./commandIdentity.ts";
import { localIdentityHost, pathProblems } from "./commandIdentity.ts";
import type { Who } from "./pathAccess.ts";

/** The service user agentd's worker runs as when agentd starts as root and the config names none. */
export const DEFAULT_WORKER_USER = "agentd";

export interface WorkerAccount {
  user: string;
  uid: number;
  gid: number;
}

/**
 * Who the worker (HTTP, the model, the store) runs as when agentd starts as root: a service user
 * that is neither root nor the command user, created when it is the default and missing. Returns
 * why it cannot be had instead; the worker then stays root and agentd says so.
 */
export function resolveWorkerAccount(
  name: string,
  commands: CommandIdentity,
  own: OwnPaths,
  host: IdentityHost = localIdentityHost(),
  create = true,
): WorkerAccount | { problem: string } {
  if (host.uid !== 0) return { problem: "agentd is not started as root" };
  const find = () => parsePasswd(host.passwd()).find((account) => account.name === name);
  let account = find();
  if (!account && name === DEFAULT_WORKER_USER && !create)
    return { problem: `the service user ${name} does not exist yet: \`agentd serve\` creates it at start` };
  if (!account && name === DEFAULT_WORKER_USER) {
    try {
      host.createUser(name, false);
    } catch (error) {
      if (!(error instanceof AgentdError)) throw error;
      return { problem: error.message };
    }
    account = find();
  }
  if (!account) return { problem: `there is no user ${name} (supervisor.worker_user) in /etc/passwd` };
  if (account.uid === 0 || account.gid === 0) return { problem: `${name} is root (uid ${account.uid}, gid ${account.gid})` };
  if (account.uid === commands.credentials?.uid) return { problem: `${name} is the command user` };
  const who: Who = { uid: account.uid, gids: [account.gid] };
  // The root supervisor runs the binary again (config checks) and reads the config: the worker must not replace either.
  // Reading the config is the worker's right (it gets it anyway); writing either is not.
  const writable = [own.binary, ...(own.config ? [own.config] : [])].flatMap((path) => pathProblems(path, false, who, name, host));
  if (writable.length > 0) return { problem: writable.join("; ") };
  const unreachable = unreachablePath([own.binary, own.dataDir], who, host);
  if (unreachable) return { problem: unreachable };
  return { user: name, uid: account.uid, gid: account.gid };
}

/** The first of `paths` the user cannot reach: a directory above it it may not search, or a binary it may not run. */
function unreachablePath(paths: readonly string[], who: Who, host: IdentityHost): string | undefined {
  for (const path of paths) {
    let real: string;
    try {
      real = host.realpath(path);
    } catch {
      real = path;
    }
    for (let dir = dirname(real); ; dir = dirname(dir)) {
      const info = host.stat(dir);
      if (info && !searchable(info, who)) return `uid ${who.uid} cannot enter ${dir}, above ${real}`;
      if (dir === "/") break;
    }
  }
  return undefined;
}

function searchable(info: { uid: number; gid: number; mode: number }, who: Who): boolean {
  const bits = info.uid === who.uid ? (info.mode >> 6) & 7 : who.gids.includes(info.gid) ? (info.mode >> 3) & 7 : info.mode & 7;
  return (bits & 1) !== 0;
}
