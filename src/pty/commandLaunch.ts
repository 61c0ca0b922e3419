import { accessSync, constants, readFileSync } from "node:fs";
import {
  type CommandIdentity,
  groupsOf,
  parseGroups,
  parsePasswd,
  type SpawnCredentials,
  type SpawnSandbox,
} from "../core/process/index.ts";
import { readEscalation } from "../core/shell/escalationWords.ts";
import { PtyError } from "./ptyErrors.ts";

/** How one command starts: program, words, environment, directory, user and whether it may gain privileges. */
export interface Launch {
  path: string;
  argv: string[];
  env: Record<string, string>;
  cwd?: string;
  credentials?: SpawnCredentials;
  noNewPrivs: boolean;
  sandbox?: SpawnSandbox;
}

/**
 * How a session's command starts: an allowed bare escalation (its words), a privileged terminal a
 * person opened, or an ordinary command.
 */
export function chooseLaunch(
  words: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd: string | undefined,
  identity: CommandIdentity,
  privileged: boolean,
  escalation: readonly string[] | undefined,
): Launch {
  if (privileged && escalation) return escalationLaunch(escalation, cwd, identity);
  if (privileged) return privilegedTerminalLaunch(words, env, cwd);
  return commandLaunch(words, env, cwd, identity);
}

/** Where a privileged call's program is looked up: never a directory a command could write. */
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** What a privileged call keeps of agentd's environment: the locale, nothing that runs code. */
const KEPT = ["LANG", "LC_ALL", "LC_CTYPE"];

/**
 * A command as the agent, an MCP client or agentd itself runs it: as the command user when there
 * is one, always with no_new_privs, so no setuid program below it raises privileges.
 */
export function commandLaunch(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd: string | undefined,
  identity: CommandIdentity,
): Launch {
  const ownEnv: Record<string, string> = identity.user
    ? { ...env, HOME: identity.home ?? "/", USER: identity.user, LOGNAME: identity.user }
    : { ...env };
  return {
    path: programPath(argv[0], ownEnv.PATH ?? process.env.PATH ?? SYSTEM_PATH),
    argv: identity.sandbox ? asNamespaceInit(argv) : [...argv],
    env: ownEnv,
    ...(cwd === undefined ? {} : { cwd }),
    ...(identity.credentials ? { credentials: identity.credentials } : {}),
    ...(identity.sandbox ? { sandbox: identity.sandbox } : {}),
    noNewPrivs: true,
  };
}

/**
 * In a PID namespace the command's shell is pid 1, which the kernel spares every signal it has no
 * handler for: Ctrl-C and a session's SIGHUP/SIGTERM would do nothing. The shell stays pid 1 with
 * handlers that end it, and runs the command as its child.
 */
function asNamespaceInit(argv: readonly string[]): string[] {
  const [shell, flag, cmd] = argv;
  if (shell === undefined || cmd === undefined || argv.length !== 3 || (flag !== "-c" && flag !== "-lc")) return [...argv];
  return [shell, flag, `trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 143' TERM; eval "shift; $1"`, shell, cmd];
}

/** A terminal a person opened with /api/pty/privileged: agentd's own user (root when agentd is), no no_new_privs. */
export function privilegedTerminalLaunch(argv: readonly string[], env: Readonly<Record<string, string>>, cwd: string | undefined): Launch {
  return {
    path: programPath(argv[0], env.PATH ?? process.env.PATH ?? SYSTEM_PATH),
    argv: [...argv],
    env: { ...env },
    ...(cwd === undefined ? {} : { cwd }),
    noNewPrivs: false,
  };
}

/**
 * A bare escalation the sudo scope allowed, run as its words and nothing around them: its program
 * from the system bin directories, in a fixed environment, in "/" unless the card named a directory.
 * Started as root, agentd runs the words itself as the target user (no sudo, no sudoers rule);
 * started as a user, it execs the escalator, which asks the system's own rules.
 */
export function escalationLaunch(argv: readonly string[], cwd: string | undefined, identity: CommandIdentity): Launch {
  if (argv[0] === undefined) throw new PtyError("pty_spawn_failed", "A privileged call needs a program");
  const env: Record<string, string> = { PATH: SYSTEM_PATH, TERM: "xterm-256color" };
  for (const name of KEPT) if (process.env[name] !== undefined) env[name] = process.env[name]!;
  const where = cwd ?? "/";
  if (identity.mode !== "command_user") return { path: systemProgram(argv[0]), argv: [...argv], env, cwd: where, noNewPrivs: false };
  const reading = readEscalation(argv);
  if ("refused" in reading) throw new PtyError("pty_spawn_failed", `Cannot run this approved call: ${reading.refused}`);
  const account = parsePasswd(readFileSync("/etc/passwd", "utf8")).find((a) => a.name === reading.user);
  if (!account) throw new PtyError("pty_spawn_failed", `Cannot run this approved call as ${reading.user}: no such user in /etc/passwd`);
  const groups = groupsOf(account, parseGroups(readFileSync("/etc/group", "utf8")));
  return {
    path: systemProgram(reading.command[0]!),
    argv: reading.command,
    env: { ...env, HOME: account.home, USER: account.name, LOGNAME: account.name },
    cwd: where,
    credentials: { uid: account.uid, gid: account.gid, groups },
    noNewPrivs: false,
  };
}

function programPath(program: string | undefined, path: string): string {
  if (program === undefined) throw new PtyError("pty_spawn_failed", "A command needs a program");
  if (program.includes("/")) return program;
  const found = Bun.which(program, { PATH: path });
  if (!found) throw new PtyError("pty_spawn_failed", `cannot start ${program}: not found in PATH`, { errno: "ENOENT" });
  return found;
}

function systemProgram(program: string): string {
  if (program.includes("/")) return program;
  for (const dir of SYSTEM_PATH.split(":")) {
    const candidate = `${dir}/${program}`;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this directory.
    }
  }
  throw new PtyError("pty_spawn_failed", `${program} was not found in the system bin directories (${SYSTEM_PATH})`);
}
