import { lstatSync, readFileSync, realpathSync } from "node:fs";
import { dirname } from "node:path";
import { AgentdError } from "../../errors/index.ts";
import type { SpawnCredentials, SpawnSandbox } from "../spawn/nativeSpawn.ts";
import { namespaceSandboxAvailable } from "../spawn/sandboxProbe.ts";
import { type Account, parseGroups, parsePasswd } from "./accountFiles.ts";
import { canRead, controls, type Who } from "./pathAccess.ts";

/** The user commands run as when agentd starts as root and the config names none. */
export const DEFAULT_COMMAND_USER = "agentd-cmd";

/**
 * How agentd keeps its commands from itself:
 * - `command_user`: started as root, every command runs as a separate unprivileged uid, so the
 *   kernel keeps it from agentd's files, processes and API decisions;
 * - `namespaces`: started as a user where user namespaces are allowed, commands run as agentd's
 *   own uid in mount and PID namespaces of their own: agentd's data dir and config hidden, its
 *   binary read-only, its processes out of sight; the API then needs the token for what a
 *   command could misuse, since the uid cannot tell them apart;
 * - `unguarded`: started as a user without namespaces: nothing holds them.
 */
export type GateMode = "command_user" | "namespaces" | "unguarded";

export interface CommandIdentity {
  mode: GateMode;
  /** The command user's name and ids; absent when commands run as agentd's own user. */
  user?: string;
  credentials?: SpawnCredentials;
  /** The command user's home (HOME for its commands). */
  home?: string;
  /** In `namespaces` mode: what every command's mount namespace hides and keeps read-only. */
  sandbox?: SpawnSandbox;
  /** What the gate, though it holds, does not cover: said on the page and by doctor. */
  limits?: string;
  /** Why the gate does not hold, said plainly; empty when it holds. */
  problems: readonly string[];
}

export interface RunAs {
  user: string;
  groups: readonly string[];
}

export interface OwnPaths {
  binary: string;
  config?: string;
  dataDir: string;
}

/** Where the system's accounts are read from; the tests give their own. */
export interface IdentityHost {
  uid: number;
  passwd(): string;
  group(): string;
  /**
   * Creates a system user with no login shell: the command user with a home of its own, the
   * worker's service user (`home: false`) with none.
   */
  createUser(name: string, home?: boolean): void;
  stat(path: string): { uid: number; gid: number; mode: number } | undefined;
  realpath(path: string): string;
  /** Why the namespace sandbox cannot be had here; undefined when it can. */
  namespaces(): string | undefined;
}

function findAccount(host: IdentityHost, name: string): Account | undefined {
  return parsePasswd(host.passwd()).find((account) => account.name === name);
}

/**
 * Resolves who commands run as; throws command_user_unavailable rather than run them as root.
 * `agentd serve` creates the default user when it is missing; `agentd doctor` (create: false) only looks.
 */
export function resolveCommandIdentity(runAs: RunAs, own: OwnPaths, host: IdentityHost = localHost, create = true): CommandIdentity {
  if (host.uid !== 0) return userStart(own, host);
  let account = findAccount(host, runAs.user);
  if (!account && runAs.user === DEFAULT_COMMAND_USER && create) {
    host.createUser(runAs.user);
    account = findAccount(host, runAs.user);
  }
  if (!account) throw unavailable(`there is no user ${runAs.user} (pty.run_as.user) in /etc/passwd`);
  if (account.uid === 0 || account.gid === 0) throw unavailable(`${runAs.user} is root (uid ${account.uid}, gid ${account.gid})`);
  const groups = parseGroups(host.group());
  const gids = runAs.groups.map((name) => {
    const group = groups.find((g) => g.name === name);
    if (!group) throw unavailable(`there is no group ${name} (pty.run_as.groups) in /etc/group`);
    if (group.gid === 0) throw unavailable(`group ${name} is root's (gid 0)`);
    return group.gid;
  });
  const who: Who = { uid: account.uid, gids: [account.gid, ...gids] };
  return {
    mode: "command_user",
    user: runAs.user,
    credentials: { uid: account.uid, gid: account.gid, groups: [account.gid, ...gids] },
    home: account.home,
    problems: ownPathProblems(own, who, runAs.user, host),
  };
}

/** Started as a user: the namespace sandbox where the kernel allows it, else unguarded, saying why. */
function userStart(own: OwnPaths, host: IdentityHost): CommandIdentity {
  const why = host.namespaces();
  if (why !== undefined)
    return {
      mode: "unguarded",
      problems: [
        `agentd runs as uid ${host.uid}, not root, and cannot sandbox its commands (${why}): they run as agentd's own user, so they can read its token and store, signal it and decide their own approvals. Start agentd as root (commands then run as a command user of their own).`,
      ],
    };
  const exists = (path: string) => host.stat(path) !== undefined;
  // The user's runtime dir holds its systemd and D-Bus sockets: through them a command could start a unit outside the sandbox.
  const runtimeDir = `/run/user/${host.uid}`;
  return {
    mode: "namespaces",
    sandbox: {
      hide: [own.dataDir, ...(own.config && exists(own.config) ? [own.config] : []), ...(exists(runtimeDir) ? [runtimeDir] : [])],
      readOnly: [own.binary],
      privateTerminals: true,
    },
    problems: [],
    limits: `commands run as agentd's own user (uid ${host.uid}) in namespaces of their own: they cannot see agentd's processes, data dir or config, nor replace its binary, but they can write that user's other files (dotfiles, ~/.ssh/authorized_keys, an agentd.jsonc where agentd looks for one when started without --config), where what they leave runs as agentd's user later; start agentd as root for a command user of their own`,
  };
}

function unavailable(why: string): AgentdError {
  return new AgentdError(
    "command_user_unavailable",
    `Cannot run commands as the command user: ${why}. agentd runs no command as root instead.`,
  );
}

/**
 * The binary, the config and the data dir must be out of the command user's reach: not writable
 * (nor any directory above them, where a rename would replace them), and the config and data dir
 * not readable (the token, the store, provider keys). The binary may be read: it holds no secret.
 */
/** This machine's accounts and files. */
export function localIdentityHost(): IdentityHost {
  return localHost;
}

export function ownPathProblems(own: OwnPaths, who: Who, user: string, host: IdentityHost): string[] {
  return [
    ...pathProblems(own.binary, false, who, user, host),
    ...(own.config ? pathProblems(own.config, true, who, user, host) : []),
    ...pathProblems(own.dataDir, true, who, user, host),
  ];
}

/**
 * What `who` could do to one of agentd's paths: write it (or rename it away through a directory
 * above it), and, for a `secret` one, read it. Empty when the path is not there (yet).
 */
export function pathProblems(path: string, secret: boolean, who: Who, user: string, host: IdentityHost): string[] {
  let real: string;
  try {
    real = host.realpath(path);
  } catch {
    return []; // Not there (yet): nothing a command could reach.
  }
  const info = host.stat(real);
  if (!info) return [];
  const problems: string[] = [];
  if (controls(info, who)) problems.push(`${user} can write ${real}`);
  else if (secret && canRead(info, who)) problems.push(`${user} can read ${real}`);
  for (let child = real, dir = dirname(real); ; child = dir, dir = dirname(dir)) {
    const parent = host.stat(dir);
    // In a sticky directory (/tmp) only an entry's owner may rename it away.
    const sticky = parent !== undefined && parent.uid !== who.uid && (parent.mode & 0o1000) !== 0 && host.stat(child)?.uid !== who.uid;
    if (parent && controls(parent, who) && !sticky) {
      problems.push(`${user} can write ${dir}, above ${real}`);
      break;
    }
    if (dir === "/") break;
  }
  return problems;
}

/** useradd waits on no lock of its own: about 2 s of retries outlast another account being made. */
const USERADD_ATTEMPTS = 8;

const localHost: IdentityHost = {
  uid: process.getuid?.() ?? 0,
  passwd: () => readFileSync("/etc/passwd", "utf8"),
  group: () => readFileSync("/etc/group", "utf8"),
  createUser(name, home = true) {
    // A home of its own (git, pip and npm want one), beside agentd's state but not inside it.
    const homeArgs = home ? ["--create-home", "--home-dir", `/var/lib/${name}`] : ["--no-create-home", "--home-dir", "/"];
    const argv = ["useradd", "--system", "--user-group", ...homeArgs, "--shell", "/usr/sbin/nologin", name];
    // Another start (a second agentd, the supervisor and its worker) may hold the passwd lock or have made the user first.
    for (let attempt = 1; ; attempt++) {
      // The environment as it is now: Bun's default is the one the process started with.
      const result = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe", env: { ...process.env } });
      const stderr = result.stderr.toString().trim();
      if (result.exitCode === 0 || stderr.includes("already exists")) return;
      if (!stderr.includes("cannot lock") || attempt === USERADD_ATTEMPTS)
        throw unavailable(`useradd ${name} failed: ${stderr || `exit ${result.exitCode}`}`);
      Bun.sleepSync(50 * attempt);
    }
  },
  stat(path) {
    try {
      const info = lstatSync(path);
      return { uid: info.uid, gid: info.gid, mode: info.mode };
    } catch {
      return undefined;
    }
  },
  realpath: (path) => realpathSync(path),
  namespaces: () => namespaceSandboxAvailable(),
};
